"""A Hugging Face encoder that turns a batch of token ids into one vector per name."""
import json
from typing import Dict, Union

import torch
from torch import nn

POOLINGS = ("cls", "mean")


def backbone_from_config(backbone_config: Union[str, Dict]) -> nn.Module:
    """A randomly initialised AutoModel of that architecture (weights come from bytes or
    from `load_pretrained_weights`), so nothing is read from the backbone's directory."""
    from transformers import AutoConfig, AutoModel

    settings = json.loads(backbone_config) if isinstance(backbone_config, str) else dict(backbone_config)
    config = AutoConfig.for_model(settings.pop("model_type"), **settings)
    try:
        # BERT-like models build a pooler that name encoders never use: leaving it out
        # keeps untrained weights out of the saved model.
        return AutoModel.from_config(config, add_pooling_layer=False)
    except TypeError:
        return AutoModel.from_config(config)


class TransformerNameEncoder(nn.Module):
    """[CLS] or mean-pooled last hidden state. `sparse_weight` is BioSyn's lambda (the
    weight of the TF-IDF score beside the dense one); unused by purely dense encoders,
    but kept in every state dict so one module class serves both."""

    def __init__(self, backbone_config: Union[str, Dict], pooling: str = "cls"):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
        self.pooling = pooling
        self.backbone = backbone_from_config(backbone_config)
        self.sparse_weight = nn.Parameter(torch.zeros(()))

    @property
    def width(self) -> int:
        """The backbone's hidden size: the width of the name vectors."""
        return int(self.backbone.config.hidden_size)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """One vector per name: the [CLS] state, or the mean of the non-padding token states,
        as `pooling` says."""
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if self.pooling == "cls":
            return hidden[:, 0]
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)

    def load_pretrained_weights(self, directory: str) -> None:
        """Copy the weights of a local pretrained checkpoint of the same architecture."""
        from transformers import AutoModel

        pretrained = AutoModel.from_pretrained(directory, local_files_only=True)
        missing, unexpected = self.backbone.load_state_dict(pretrained.state_dict(), strict=False)
        # The pretrained pooler (if any) is dropped on purpose; anything else missing
        # means the architecture does not match the checkpoint.
        missing = [key for key in missing if not key.startswith("pooler.")]
        if missing:
            raise ValueError(f"{directory}: the checkpoint lacks {len(missing)} weight(s) "
                             f"of the architecture, e.g. {missing[:3]}")
