"""The release report: the estimates of a collector's released reports, with the campaign's guarantee.

An adapter: the tally comes from :func:`sufficientdp.engines.tally_collector` (released reports only, read-only),
the estimates from :func:`sufficientdp.collection.campaign.estimate_release`, the campaign (q, k, the guarantee)
from the collector database read-only; the page is ``templates/release.html.j2``. Every number on the page is in
``ReleaseReport.numbers`` and embedded as ``<script type="application/json" id="numbers">``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import __version__
from .._errors import DataError
from .._json import jsonable
from .design import render_page

__all__ = ["SERVED_DATABASE", "TOP_VECTORS", "ReleaseReport", "release_command", "release_numbers", "release_page",
           "release_report"]

#: Most frequent vectors listed from the joint estimate (L <= 12).
TOP_VECTORS = 10
#: What the page a collector serves writes for ``--database`` in its command line (the URL may hold a password).
SERVED_DATABASE = "DATABASE_URL"
#: The campaign fields shown (the token key and internal status are left out).
_SPEC_FIELDS = ("id", "name", "bits", "epsilon", "eta", "crowd_size", "reports_per_person", "q", "eta_at_q",
                "guarantee", "notes", "calibrated")


@dataclass(frozen=True, slots=True)
class ReleaseReport:
    """A rendered release report: ``numbers`` (JSON-ready), ``figures`` (name -> inline SVG) and ``html``."""

    numbers: dict[str, Any]
    figures: dict[str, str]
    html: str

    def to_dict(self) -> dict[str, Any]:
        """The numbers shown on the page (the JSON embedded in it)."""
        return self.numbers


def release_numbers(*, database: str, campaign: str, release: str | None = None, engine: str = "numpy",
                    confidence_level: float = 0.95, command: str | None = None,
                    joint: Sequence[int] | None = None) -> dict[str, Any]:
    """Every number of the release report, JSON-ready (``joint``: bits whose joint frequencies are shown).

    Raises:
        DataError: unknown campaign or release, a campaign without q yet, no released reports, or a file that is
            not a collector database.
        ParameterError: a bad engine, URL or confidence_level. FileNotFoundError: a missing SQLite file.
    """
    from ..collection.campaign import estimate_release
    from ..engines import tally_collector
    from ..service.storage import open_storage_readonly

    try:
        reader = open_storage_readonly(database)
    except RuntimeError as exc:  # a file that is not a collector database (as the tally engines say it)
        raise DataError(str(exc)) from None
    with reader:
        spec = reader.campaign_spec(campaign)
    if spec is None:
        raise DataError(f"unknown campaign {campaign!r}")
    if spec.get("q") is None:
        raise DataError(f"campaign {campaign!r} has no flip probability yet (status {spec.get('status')!r})")
    try:
        t = tally_collector(database, campaign, release_id=release, engine=engine)
    except LookupError as exc:
        raise DataError(str(exc).strip("'\"")) from None
    if t.reports < 1:
        raise DataError(f"campaign {campaign!r} has no released reports" + (f" in release {release!r}"
                                                                             if release else ""))
    est = estimate_release(t, q=float(spec["q"]), reports_per_person=int(spec["reports_per_person"]),
                           confidence_level=confidence_level, joint=joint).to_dict()
    top: list[dict[str, Any]] = []
    hist = est.pop("histogram", None)
    if hist is not None:
        order = sorted(range(len(hist["estimate"])), key=lambda i: -(hist["estimate"][i] or 0.0))[:TOP_VECTORS]
        for i in order:
            top.append({"vector": "".join("1" if (i >> j) & 1 else "0" for j in range(int(hist["bits"]))),
                        "count": hist["counts"][i], "estimate": hist["estimate"][i], "lower": hist["lower"][i],
                        "upper": hist["upper"][i], "std_error": hist["std_error"][i]})
    return jsonable({
        "report": "release", "version": __version__, "command": command, "campaign": campaign,
        "release": release, "engine": engine, "spec": {k: spec.get(k) for k in _SPEC_FIELDS},
        "estimates": est, "top_vectors": top,
    }, fallback=str)


def _figures(numbers: Mapping[str, Any]) -> dict[str, str]:
    from ..plot import release_estimates, to_svg

    est = numbers["estimates"]
    return {"release_estimates": to_svg(release_estimates(est["estimates"], confidence_level=est["level"]))}


def release_report(**kwargs: Any) -> ReleaseReport:
    """Gather the numbers (:func:`release_numbers`, same keyword arguments), draw, render."""
    numbers = release_numbers(**kwargs)
    figures = _figures(numbers)
    return ReleaseReport(numbers=numbers, figures=figures, html=render_page("release.html.j2", numbers, figures))


def release_command(*, database: str, campaign: str, release: str | None = None, engine: str = "numpy",
                    confidence_level: float = 0.95, output: str = "release.html",
                    joint: Sequence[int] | None = None) -> str:
    """The canonical ``sufficientdp report release`` command line shown on the page (options at their default are
    left out)."""
    words = ["sufficientdp", "report", "release", "--database", database, "--campaign", campaign]
    if release is not None:
        words += ["--release", release]
    if engine != "numpy":
        words += ["--engine", engine]
    if confidence_level != 0.95:
        words += ["--confidence-level", repr(confidence_level)]
    if joint:
        words += ["--joint", ",".join(str(b) for b in joint)]
    return shlex.join(words + ["--output", output])


@lru_cache(maxsize=64)
def release_page(database: str, campaign: str, release: str) -> str:
    """The HTML page of one release, as a collector serves it (``GET .../releases/{id}/report``).

    The same page as ``sufficientdp report release --database URL --campaign ID --release RID`` (default
    ``--output``), except that the command line names the database :data:`SERVED_DATABASE` instead of the URL.
    A release never changes, so pages are cached (64 most recent).

    Raises:
        DataError: unknown campaign or release. ImportError: the ``report`` extra is missing.
    """
    command = release_command(database=SERVED_DATABASE, campaign=campaign, release=release)
    return release_report(database=database, campaign=campaign, release=release, command=command).html
