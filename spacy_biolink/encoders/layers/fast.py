"""A residual CNN over subword embeddings (ResCNN, Lai et al. 2021), as an nn.Module.

token ids -> embedding (embed_dim) -> n_layers residual blocks x + ReLU(Conv1d(x)) ->
masked max and mean pooling, concatenated -> Linear to the output width.

The embedding table starts from a transformer's input embeddings, reduced to embed_dim
by PCA when embed_dim is smaller (fast_encoder.init_from_backbone), so the saved model
stays small (vocabulary x embed_dim floats) and encoding runs no transformer.
"""
import torch
from torch import nn


class ResidualCnnNameEncoder(nn.Module):
    """Subword ids -> one vector per name: embedding, residual convolutions, max + mean
    pooling, a linear output layer (the module docstring's layout)."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_width: int, width: int,
                 n_layers: int = 2, kernel_size: int = 3, dropout: float = 0.1):
        super().__init__()
        self.width = width
        # Sparse gradients: a step updates the rows of its batch's tokens, not the whole
        # table (a dense Adam step over the table costs more than the network's).
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0, sparse=True)
        self.input = nn.Linear(embed_dim, hidden_width) if embed_dim != hidden_width else None
        self.convolutions = nn.ModuleList(
            nn.Conv1d(hidden_width, hidden_width, kernel_size, padding=kernel_size // 2)
            for _ in range(n_layers))
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(2 * hidden_width, width)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """One vector per name (unnormalised): ids and mask are (batch, tokens) int tensors."""
        mask = attention_mask.unsqueeze(-1).to(torch.float32)
        x = self.embedding(input_ids)
        if self.input is not None:
            x = self.input(x)
        x = self.dropout(x) * mask
        h = x.transpose(1, 2)
        conv_mask = mask.transpose(1, 2)
        for conv in self.convolutions:
            # Padding is zeroed after each block so it never leaks into a neighbour's window.
            h = (h + torch.relu(conv(h))) * conv_mask
        h = h.transpose(1, 2)
        maxed = h.masked_fill(mask == 0, float("-inf")).max(dim=1).values
        maxed = torch.where(torch.isfinite(maxed), maxed, torch.zeros_like(maxed))
        mean = h.sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return self.output(self.dropout(torch.cat([maxed, mean], dim=-1)))
