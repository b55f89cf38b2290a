"""encode_one_hot and encode_set allocate (people x bits): bits is bounded by the analyses' limit, 4096 (bad-input
sweep, session 11: bits=10**12 was a MemoryError of 2.7 TiB, bits=1e308 numpy's "Maximum allowed dimension
exceeded")."""

import pytest

import sufficientdp as sdp
from sufficientdp import ParameterError


@pytest.mark.parametrize("bits", [4097, 10**12, 1e308, 2**63])
def test_encoders_refuse_bits_beyond_the_limit(bits):
    with pytest.raises(ParameterError, match="bits must be an integer >= 1 and <= 4096"):
        sdp.encode_one_hot([0, 1, 2], bits=bits)
    with pytest.raises(ParameterError, match="bits must be an integer >= 1 and <= 4096"):
        sdp.encode_set([[0], [1, 2]], bits=bits, max_weight=2)


def test_encoders_at_the_limit():
    v = sdp.encode_one_hot([4095, 0], bits=4096)
    assert v.shape == (2, 4096) and v[0, 4095] == 1 and v.sum() == 2
    s = sdp.encode_set([[4095, 1]], bits=4096, max_weight=2)
    assert s.shape == (1, 4096) and s[0, 4095] == 1 and s[0, 1] == 1 and s.sum() == 2
