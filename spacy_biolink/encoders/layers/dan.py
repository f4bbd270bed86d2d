"""The deep averaging network of CCA+DAN (Fivez et al., 2021), as an nn.Module.

Input: the mean pre-trained word vector of a name. The fitted CCA projections are
buffers, so they are saved with the weights (safetensors) and need no pickle:
    name side:    (x - name_mean) @ name_projection      applied before the network
    concept side: (u - concept_mean) @ concept_projection the prototype targets (training)
Until CCA is fitted both are the identity, which is the plain DAN of the paper.
"""
import torch
from torch import nn


class DeepAveragingNetwork(nn.Module):
    def __init__(self, width: int, hidden_width: int, dropout: float = 0.5):
        super().__init__()
        self.width = width
        self.register_buffer("name_mean", torch.zeros(width))
        self.register_buffer("name_projection", torch.eye(width))
        self.register_buffer("concept_mean", torch.zeros(width))
        self.register_buffer("concept_projection", torch.eye(width))
        self.hidden = nn.Linear(width, hidden_width)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(hidden_width, width)

    def set_cca(self, name_mean, name_projection, concept_mean, concept_projection) -> None:
        """Set the CCA means and projections of names and concepts (buffers: saved with weights)."""
        for buffer, value in ((self.name_mean, name_mean),
                              (self.name_projection, name_projection),
                              (self.concept_mean, concept_mean),
                              (self.concept_projection, concept_projection)):
            buffer.copy_(torch.as_tensor(value, dtype=buffer.dtype))

    def project_names(self, mean_vectors: torch.Tensor) -> torch.Tensor:
        """Mean word vectors of names, centered and CCA-projected."""
        return (mean_vectors - self.name_mean) @ self.name_projection

    def project_concepts(self, prototypes: torch.Tensor) -> torch.Tensor:
        """Concept prototypes, centered and CCA-projected into the same space as names."""
        return (prototypes - self.concept_mean) @ self.concept_projection

    def forward(self, mean_vectors: torch.Tensor) -> torch.Tensor:
        """Encode names from their mean word vectors: CCA projection, a ReLU layer, dropout,
        then the output layer."""
        hidden = torch.relu(self.hidden(self.project_names(mean_vectors)))
        return self.output(self.dropout(hidden))
