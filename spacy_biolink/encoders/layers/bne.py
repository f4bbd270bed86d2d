"""BNE's name encoder (Phan et al. 2019): char BiLSTM per word + frozen word vector,
word-level BiLSTM with max pooling, linear output.

All words of a batch of names go through the char BiLSTM at once (packed), then are
regrouped per name for the word BiLSTM (packed again): no Python loop per name or char.
"""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

OUTPUT_ACTIVATIONS = ("linear", "tanh")


class BneNameEncoder(nn.Module):
    def __init__(self, n_chars: int, word_dim: int, char_dim: int = 50, char_hidden: int = 200,
                 word_hidden: int = 200, output_dim: int = 200, dropout: float = 0.5,
                 output_activation: str = "linear"):
        super().__init__()
        if output_activation not in OUTPUT_ACTIVATIONS:
            raise ValueError(f"output_activation must be one of {OUTPUT_ACTIVATIONS}, "
                             f"not {output_activation!r}")
        self.output_dim = output_dim
        self.output_activation = output_activation
        # Row 0 pads: it never reaches an LSTM step (packed), so it stays zero.
        self.char_embeddings = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.char_lstm = nn.LSTM(char_dim, char_hidden, batch_first=True, bidirectional=True)
        self.word_lstm = nn.LSTM(word_dim + 2 * char_hidden, word_hidden, batch_first=True,
                                 bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(2 * word_hidden, output_dim)

    def forward(self, char_ids: torch.Tensor, char_lengths: torch.Tensor,
                word_vectors: torch.Tensor, word_index: torch.Tensor,
                word_counts: torch.Tensor) -> torch.Tensor:
        """The distinct words of the batch: char_ids (n_words, max_chars) long, 0-padded;
        char_lengths (n_words,) >= 1; word_vectors (n_words, word_dim), the frozen
        pre-trained vectors (zeros for unknown words). The names: word_index (n_tokens,)
        their words in order, as rows of the above; word_counts (n_names,) >= 1.
        Returns (n_names, output_dim).

        Names share most of their words, so the char BiLSTM runs once per distinct word.
        """
        chars = self.char_embeddings(char_ids)
        packed = pack_padded_sequence(chars, char_lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        _, (last, _) = self.char_lstm(packed)
        # last: (2, n_words, hidden), the final forward and backward states.
        words = torch.cat([word_vectors, last[0], last[1]], dim=-1)
        tokens = self.dropout(words[word_index])
        per_name = pad_sequence(torch.split(tokens, word_counts.tolist()), batch_first=True)
        packed = pack_padded_sequence(per_name, word_counts.cpu(), batch_first=True,
                                      enforce_sorted=False)
        states, _ = self.word_lstm(packed)
        states, _ = pad_packed_sequence(states, batch_first=True, padding_value=float("-inf"))
        pooled = states.max(dim=1).values
        out = self.output(pooled)
        if self.output_activation == "tanh":
            out = torch.tanh(out)
        return out
