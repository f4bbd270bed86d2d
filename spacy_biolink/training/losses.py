"""Training losses of the name encoders (flat module of functions; torch imported inside)."""


def marginal_nll(scores, positives):
    """BioSyn's synonym marginalization: -log of the summed softmax probability of the
    candidates that name the mention's concept, averaged over the batch.

    scores: (batch, candidates) float; positives: (batch, candidates) bool.
    A mention with no positive candidate contributes 0 (BioSyn's code does the same:
    there is nothing to pull towards until the dense candidates find one).
    """
    import torch

    log_probs = torch.log_softmax(scores, dim=-1)
    masked = log_probs.masked_fill(~positives, float("-inf"))
    log_marginal = torch.logsumexp(masked, dim=-1)
    has_positive = positives.any(dim=-1)
    losses = torch.where(has_positive, -log_marginal, torch.zeros_like(log_marginal))
    return losses.mean()


def batch_hard_soft_margin_triplet(embeddings, labels):
    """Batch-hard soft-margin triplet loss (Hermans et al. 2017; Xu & Bethard 2021):
    for each anchor, its farthest same-label example and nearest other-label example by
    Euclidean distance; loss = mean softplus(d_pos - d_neg).

    embeddings: (batch, dim) float; labels: (batch,) int. An anchor without a positive
    (its label occurs once) uses d_pos = 0; one without a negative is left out.
    """
    import torch

    distances = torch.cdist(embeddings, embeddings, p=2)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    hardest_positive = (distances * same.to(distances.dtype)).max(dim=1).values
    hardest_negative = distances.masked_fill(same, float("inf")).min(dim=1).values
    has_negative = torch.isfinite(hardest_negative)
    if not bool(has_negative.any()):
        return embeddings.sum() * 0.0
    losses = torch.nn.functional.softplus(hardest_positive - hardest_negative)
    return losses[has_negative].mean()


def in_batch_logistic(anchors, targets, labels):
    """BNE's logistic loss on dot products (Phan et al. 2019): log(1 + e^-x) for each
    anchor and its own target (row i of `targets`), log(1 + e^x) for the other targets
    of the batch, the in-batch negatives, averaged per anchor (the expectation of the
    paper's one sampled negative). A target of the anchor's own concept is no negative.

    anchors: (batch, dim); targets: (batch, dim) (synonym encodings, concept vectors g(c)
    or context vectors q(s)); labels: (batch,) concept ids.
    """
    from torch.nn.functional import softplus

    logits = anchors @ targets.T
    positive = softplus(-logits.diagonal())
    negative_mask = (labels.unsqueeze(0) != labels.unsqueeze(1)).to(logits.dtype)
    n_negatives = negative_mask.sum(dim=1)
    negative = (softplus(logits) * negative_mask).sum(dim=1) / n_negatives.clamp(min=1.0)
    return (positive + negative).mean()


def cosine_triplet_batch_mean(anchors, positives, negatives, margin: float = 0.1):
    """CCA+DAN's siamese triplet loss: max(mean d(a, p) - mean d(a, n) + margin, 0) with
    d the cosine distance. The distances are averaged over the batch before the hinge,
    as the authors' code does (the paper writes the hinge per triplet).

    anchors, positives, negatives: (batch, dim) encodings, row i one triplet.
    """
    import torch
    from torch.nn.functional import cosine_similarity

    positive = (1.0 - cosine_similarity(anchors, positives, dim=-1)).mean()
    negative = (1.0 - cosine_similarity(anchors, negatives, dim=-1)).mean()
    return torch.clamp(positive - negative + margin, min=0.0)


def cosine_triplet_per_triplet(anchors, positives, negatives, margin: float = 0.1):
    """The same loss with the hinge per triplet, as the paper's Equation 3 writes it, then
    averaged: a triplet that already meets the margin gives no gradient, but one that does
    not keeps its gradient even when the batch as a whole meets it."""
    import torch
    from torch.nn.functional import cosine_similarity

    positive = 1.0 - cosine_similarity(anchors, positives, dim=-1)
    negative = 1.0 - cosine_similarity(anchors, negatives, dim=-1)
    return torch.clamp(positive - negative + margin, min=0.0).mean()


def prototype_cosine_distance(encodings, groups, targets):
    """CCA+DAN's prototypical grounding: the mean encoding of each group's names should
    point where the group's concept prototype does; mean cosine distance over groups.

    encodings: (n, dim); groups: (n,) int64 in [0, n_groups); targets: (n_groups, dim).
    """
    import torch
    from torch.nn.functional import cosine_similarity

    n_groups = targets.shape[0]
    sums = torch.zeros(n_groups, encodings.shape[1], dtype=encodings.dtype,
                       device=encodings.device).index_add(0, groups, encodings)
    counts = torch.bincount(groups, minlength=n_groups).clamp(min=1).to(encodings.dtype)
    means = sums / counts[:, None]
    return (1.0 - cosine_similarity(means, targets, dim=-1)).mean()
