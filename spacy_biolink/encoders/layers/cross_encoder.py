"""A Hugging Face encoder that reads a (mention in context, candidate) pair and gives one
relevance logit."""
from typing import Dict, Optional, Union

import torch
from torch import nn

from .transformer import backbone_from_config


class CrossEncoderScorer(nn.Module):
    """The [CLS] state of the pair through one linear unit, plus `retriever_weight` times
    the retriever's score of the candidate: the retriever already knows exact and near
    string matches, and one learned scalar lets the reranker keep that evidence (as
    BioSyn's lambda keeps the TF-IDF score beside the dense one)."""

    def __init__(self, backbone_config: Union[str, Dict]):
        super().__init__()
        self.backbone = backbone_from_config(backbone_config)
        self.head = nn.Linear(int(self.backbone.config.hidden_size), 1)
        self.retriever_weight = nn.Parameter(torch.zeros(()))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor,
                retriever_scores: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(n,) logits, one per pair."""
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if getattr(self.backbone.config, "type_vocab_size", 0) > 1:
            kwargs["token_type_ids"] = token_type_ids
        hidden = self.backbone(**kwargs).last_hidden_state[:, 0]
        logits = self.head(hidden).squeeze(-1)
        if retriever_scores is not None:
            logits = logits + self.retriever_weight * retriever_scores
        return logits

    def load_pretrained_weights(self, directory: str) -> None:
        """Copy the weights of a local pretrained checkpoint of the same architecture; the
        head starts from scratch."""
        from transformers import AutoModel

        pretrained = AutoModel.from_pretrained(directory, local_files_only=True)
        missing, _ = self.backbone.load_state_dict(pretrained.state_dict(), strict=False)
        missing = [key for key in missing if not key.startswith("pooler.")]
        if missing:
            raise ValueError(f"{directory}: the checkpoint lacks {len(missing)} weight(s) "
                             f"of the architecture, e.g. {missing[:3]}")
