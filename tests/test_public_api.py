"""The curated public surface (STYLE.md: a sorted __all__ pinned by a test) and the core's dependencies."""

import subprocess
import sys

import sufficientdp

# Curated (issue 11): the guarantee (calibrate; privacy_tail, proven_tail, rounds_tail and their result types
# TailResult, Interval, Kind, Scope, Direction), the mechanism's parameters, the flow (encode, randomize, tally,
# estimate) and the exceptions. Low-level helpers (pack_bits, unpack_bits, tally_packed, DyadicProbability,
# effective_bits, ratio_moments / RatioMoments) live in their modules only.
EXPECTED = [
    "BitEstimates",
    "Calibration",
    "CalibrationError",
    "DataError",
    "Direction",
    "Interval",
    "JointEstimate",
    "Kind",
    "ParameterError",
    "PrivacyTarget",
    "RandomizationParams",
    "Randomizer",
    "Scope",
    "SufficientDPError",
    "TailResult",
    "Tally",
    "__version__",
    "calibrate",
    "encode_bits",
    "encode_one_hot",
    "encode_set",
    "estimate_bits",
    "joint_frequencies",
    "local_q",
    "privacy_tail",
    "proven_tail",
    "randomize",
    "rounds_tail",
    "sigma_per_sqrt_n",
    "tally",
]


def test_all_is_sorted_and_pinned():
    assert sufficientdp.__all__ == sorted(sufficientdp.__all__)
    assert sufficientdp.__all__ == EXPECTED
    for name in EXPECTED:
        assert hasattr(sufficientdp, name)


def test_low_level_helpers_are_not_at_the_top_level():
    import sufficientdp.aggregation
    import sufficientdp.parameters
    import sufficientdp.randomization
    import sufficientdp.ratio

    for name, module in [("pack_bits", sufficientdp.randomization), ("unpack_bits", sufficientdp.randomization),
                         ("DyadicProbability", sufficientdp.randomization), ("tally_packed", sufficientdp.aggregation),
                         ("effective_bits", sufficientdp.parameters), ("ratio_moments", sufficientdp.ratio),
                         ("RatioMoments", sufficientdp.ratio)]:
        assert name not in sufficientdp.__all__
        assert hasattr(module, name)
        assert not hasattr(sufficientdp, name)


def test_one_name_per_idea_in_the_public_signatures():
    """population (not n or N), confidence_level (as scipy names it) in every public function that takes one."""
    import inspect

    for name in sufficientdp.__all__:
        obj = getattr(sufficientdp, name)
        if not inspect.isfunction(obj):
            continue
        params = inspect.signature(obj).parameters
        assert not {"n", "N", "people", "confidence"} & set(params), name
        if "level" in params:  # the former name, kept as an alias while the command line moves over
            assert "confidence_level" in params, name


def test_exception_tree():
    assert issubclass(sufficientdp.ParameterError, ValueError)
    assert issubclass(sufficientdp.DataError, ValueError)
    for exc in (sufficientdp.ParameterError, sufficientdp.DataError, sufficientdp.CalibrationError):
        assert issubclass(exc, sufficientdp.SufficientDPError)


def test_core_imports_only_numpy_and_scipy():
    """Importing the core must not pull in any extra (pandas, pyarrow, tqdm, cryptography, ...)."""
    code = (
        "import sys, sufficientdp, sufficientdp.calibration, sufficientdp.estimation, sufficientdp.randomization;"
        "import sufficientdp.aggregation, sufficientdp.ratio, sufficientdp.accounting, sufficientdp.ratio.analysis;"
        "import sufficientdp.semantics, sufficientdp.census, sufficientdp.collection, sufficientdp.engines;"
        "import sufficientdp.collection.campaign, sufficientdp.calibration.compare;"
        "bad = [m for m in ('pandas', 'pyarrow', 'tqdm', 'cryptography', 'matplotlib', 'mpmath', 'hypothesis',"
        " 'httpx', 'fastapi', 'starlette', 'uvicorn', 'psycopg', 'pyspark', 'duckdb', 'dp_accounting')"
        " if m in sys.modules]; print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_no_absolute_machine_paths_in_sources_or_docs():
    """Papers are cited by repository-relative names (``papers/001_...``), never by a machine's absolute path."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = []
    for folder in ("src", "docs", "scripts", "benchmarks", "tests"):
        for path in (root / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".txt", ".toml") and path.is_file():
                if "/work" + "/shared" in path.read_text(errors="replace"):
                    offenders.append(str(path.relative_to(root)))
    assert offenders == [], offenders


def test_cited_paper_files_are_the_specifications_files():
    """Every ``papers/<file>`` cited in the sources, docs and README names one of the specification's files (kept
    beside the repository, README "The papers"): a typo in a citation fails here."""
    import re
    from pathlib import Path

    known = {"000_2c4289e004756bf1.txt", "001_3d8ddaba8b46cf9c.txt", "002_941cee538ccfd264.txt",
             "003_94afa14f96cb68a4.txt", "004_47af1ee980af8d2f.txt", "ERRATA.md", "census-semantics-digest.md"}
    root = Path(__file__).resolve().parents[1]
    cited: set[str] = set()
    for path in [root / "README.md", *(root / "src").rglob("*.py"), *(root / "docs").rglob("*.md")]:
        cited |= set(re.findall(r"papers/(\d{3}_[0-9a-z]+\.txt|ERRATA\.md|census-semantics-digest\.md)",
                                path.read_text(errors="replace")))
        cited |= {m + "?" for m in re.findall(r"papers/(\d{3}_[0-9a-z]*)(?![0-9a-z.])", path.read_text(errors="replace"))}
    assert "001_3d8ddaba8b46cf9c.txt" in cited
    assert cited <= known, sorted(cited - known)
