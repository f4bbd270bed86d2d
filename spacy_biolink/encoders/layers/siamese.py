"""The Siamese synonymy network (seed 004): one name encoder applied to both names.

    word ids -> embedding -> LSTM -> [attention] -> Dense(128) relu -> Dense(50) relu
    p(synonym) = exp(-||left - right||_1), in (0, 1]

With `string_feature` (SiameseVerifier.v2's tfidf_feature), a string similarity of the
two names (the TF-IDF character-trigram cosine) joins the distance in one logistic unit:
    p(synonym) = sigmoid(a * -||left - right||_1 + b * cosine + c)

Row 0 of the embedding is padding, row 1 the unknown word; rows 2.. are the vocabulary
(initialised from trained word vectors by the trainer). With subword input the rows are
the tokenizer's ids (its [PAD] is 0 in BERT vocabularies) and hold static token vectors
extracted from a transformer (encoders/token_embeddings.py).
"""
from typing import Sequence

import torch
from torch import nn

PAD_ID = 0
UNK_ID = 1


class SiameseNet(nn.Module):
    def __init__(self, n_vocab: int, embed_dim: int, lstm_hidden: int,
                 dense_sizes: Sequence[int] = (128, 50), attention: bool = False,
                 dropout: float = 0.0, string_feature: bool = False):
        super().__init__()
        self.embedding = nn.Embedding(n_vocab, embed_dim, padding_idx=PAD_ID)
        self.lstm = nn.LSTM(embed_dim, lstm_hidden, batch_first=True)
        self.attention = nn.Linear(lstm_hidden, 1) if attention else None
        layers = []
        width = lstm_hidden
        for size in dense_sizes:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.dropout = nn.Dropout(dropout)
        self.dense = nn.Sequential(*layers)
        # Starts as exp(-L1) nudged by the cosine; absent (v1's state dict) when off.
        self.mix = nn.Parameter(torch.tensor([1.0, 1.0, 0.0])) if string_feature else None

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(batch, time) ids with their lengths (>= 1) -> (batch, dense_sizes[-1])."""
        embedded = self.dropout(self.embedding(ids))
        packed = nn.utils.rnn.pack_padded_sequence(embedded, lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        outputs, (last, _) = self.lstm(packed)
        if self.attention is None:
            pooled = last[-1]
        else:
            outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True,
                                                          total_length=ids.shape[1])
            mask = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None]
            weights = self.attention(outputs).squeeze(-1).masked_fill(~mask, float("-inf"))
            pooled = (torch.softmax(weights, dim=-1).unsqueeze(-1) * outputs).sum(dim=1)
        return self.dense(self.dropout(pooled))

    def forward(self, left_ids, left_lengths, right_ids, right_lengths,
                cosine=None) -> torch.Tensor:
        """Probability that each left name is a synonym of its right name: (batch,).
        `cosine`: (batch,) string similarities, needed when built with string_feature."""
        left = self.encode(left_ids, left_lengths)
        right = self.encode(right_ids, right_lengths)
        distance = (left - right).abs().sum(dim=-1)
        if self.mix is None:
            return torch.exp(-distance)
        a, b, c = self.mix
        return torch.sigmoid(-a * distance + b * cosine.to(distance.dtype) + c)
