"""PyTorch nn.Modules of the trainable encoders (imported only when one is built)."""
