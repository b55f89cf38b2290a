"""Client-side randomization: encoders, exact dyadic flips, random sources (seed 001 §1.3, §5, §6)."""

from .._numerics.dyadic import DyadicProbability
from ._kernel import bernoulli_words
from ._packing import pack_bits, padding_mask, unpack_bits, words_per_report
from ._randomize import randomize_packed
from ._sources import (
    GeneratorRandomSource,
    KeystreamRandomSource,
    RandomSource,
    SystemRandomSource,
    as_source,
    default_source,
)
from .encoders import encode_bits, encode_one_hot, encode_set
from .randomizer import Randomizer, randomize

__all__ = [
    "DyadicProbability",
    "GeneratorRandomSource",
    "KeystreamRandomSource",
    "RandomSource",
    "Randomizer",
    "SystemRandomSource",
    "as_source",
    "bernoulli_words",
    "default_source",
    "encode_bits",
    "encode_one_hot",
    "encode_set",
    "pack_bits",
    "padding_mask",
    "randomize",
    "randomize_packed",
    "unpack_bits",
    "words_per_report",
]
