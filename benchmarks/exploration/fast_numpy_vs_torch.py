#!/usr/bin/env python
"""One linker over a trained fast encoder built twice: as `init-linker --encoder` builds it
(the numpy twin, FastNameEncoderNumpy.v1) and with the torch encoder kept, for
measuring the two side by side (BENCHMARKS.md, Outside the two corpora).

    python benchmarks/exploration/fast_numpy_vs_torch.py training/fast/hybrid OUT \
        --dictionary assets/medic_06Jul2012.txt.gz --format medic \
        --augment assets/ncbi_disease/NCBItrainset_corpus.txt.gz \
        --augment assets/ncbi_disease/NCBIdevelopset_corpus.txt \
        --spelling-map assets/ncbi_disease/ncbi-spell-check.txt --sparse-weight 0.5
    sb evaluate OUT/numpy NCBI_TEST; sb evaluate OUT/torch NCBI_TEST
    python benchmarks/linker_throughput.py --docs corpus/test.spacy torch=OUT/torch \
        numpy=OUT/numpy --repeats 3
"""
import argparse
from pathlib import Path


def main() -> None:
    """Write OUT/numpy and OUT/torch."""
    from spacy_biolink.encoders import fast_numpy
    from spacy_biolink.linker import pipeline

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("encoder")
    parser.add_argument("output")
    parser.add_argument("--dictionary", required=True)
    parser.add_argument("--format", default=None)
    parser.add_argument("--augment", action="append", default=[])
    parser.add_argument("--spelling-map", default=None)
    parser.add_argument("--sparse-weight", type=float, default=None)
    args = parser.parse_args()
    overrides = ({"components.bio_linker.encoder.dense_weight": 1.0,
                  "components.bio_linker.encoder.sparse_weight": args.sparse_weight}
                 if args.sparse_weight is not None else {})
    convert = fast_numpy.torch_free_block
    for name in ("numpy", "torch"):
        # The torch build: the same init-linker with the twin's block refused.
        fast_numpy.torch_free_block = convert if name == "numpy" else (lambda block: None)
        pipeline.init_linker(Path(args.output) / name, args.dictionary, format=args.format,
                             encoder=args.encoder, augment=args.augment,
                             spelling_map=args.spelling_map, overrides=overrides, force=True)
        print(f"wrote {Path(args.output) / name}")


if __name__ == "__main__":
    main()
