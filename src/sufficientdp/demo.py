"""End-to-end demonstration: simulate a population, calibrate, randomize, anonymize, estimate.

Used by ``sufficientdp demo`` and ``make demo``. Everything here calls the public core API; nothing is faked:
the true counts come from the simulated population and the estimates only from the randomized tally.
"""

from __future__ import annotations

import os
import secrets
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import ParameterError, SufficientDPError
from ._progress import Phases
from .aggregation.tally import Tally, tally_packed
from .calibration import Calibration, calibrate
from .calibration._calibrate import DEFAULT_ETA
from .estimation.bits import BitEstimates, estimate_bits
from .parameters import RandomizationParams
from .randomization._packing import pack_bits
from .randomization._sources import as_source
from .randomization.randomizer import Randomizer

__all__ = ["MAX_DEMO_BYTES", "CollectorDemoResult", "DemoReports", "DemoResult", "demo_bytes", "run_collector_demo",
           "run_demo", "skewed_population", "write_demo_reports"]


#: Most bytes the in-memory demo's arrays may take (:func:`demo_bytes`): 2 GB. The default demo (N = 100000,
#: L = 16, k = 1) takes 4.8 MB; at the limit N is about 4.2e7 at L = 16, 3.9e5 at L = 4096.
MAX_DEMO_BYTES = 2 * 10**9
#: Uniform draws per block of :func:`skewed_population` (8 MiB of floats; the people are drawn block by block).
_SIMULATION_CELLS = 1 << 20


def demo_bytes(population: int, bits: int, reports: int = 1) -> int:
    """Bytes the in-memory demo holds for N people, L bits and k reports: the true vectors (``N L`` bytes, uint8),
    their packed copy and the ``k N`` randomized reports (``8 ceil(L/64)`` bytes each), and 16 bytes per person of
    temporaries (the correlation draw of :func:`skewed_population`, the padding check)."""
    words = -(-bits // 64)
    return population * (bits + 16 + 8 * words * (reports + 1))


def skewed_population(population: int, bits: int, rng: np.random.Generator) -> np.ndarray:
    """A skewed synthetic population: bit j is set with probability ``0.6 * 0.75**j`` and bits 0 and 1 are
    positively correlated (bit 1 copies bit 0 for a third of the people).

    The uniform draws are taken block by block (:data:`_SIMULATION_CELLS` at a time), in the order of one
    ``rng.random((population, bits))``, so the people are the same as from that single draw; the result is the
    only array of ``population * bits`` entries (1 byte each; the single draw held 9 bytes per entry)."""
    probs = 0.6 * 0.75 ** np.arange(bits)
    data = np.empty((population, bits), dtype=np.uint8)
    rows = max(1, _SIMULATION_CELLS // max(bits, 1))
    for begin in range(0, population, rows):
        end = min(begin + rows, population)
        data[begin:end] = rng.random((end - begin, bits)) < probs
    if bits >= 2:
        copy = rng.random(population) < 1 / 3
        data[copy, 1] = data[copy, 0]
    return data


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What the demo computed: the calibration, the truth, the tally and the estimates."""

    calibration: Calibration
    params: RandomizationParams
    truth: np.ndarray
    tally: Tally
    estimates: BitEstimates
    randomness: str
    homogeneous: Calibration | None = None  # the paper's configuration only, to price the proof
    ledger: dict[str, Any] | None = None  # a device's privacy ledger over daily campaigns of this guarantee

    @property
    def covered(self) -> np.ndarray:
        """Whether each true count lies in its confidence interval."""
        return (self.estimates.lower <= self.truth) & (self.truth <= self.estimates.upper)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        rows = self.estimates.to_records()
        for r, t, c in zip(rows, self.truth, self.covered):
            r["true"] = int(t)
            r["covered"] = bool(c)
        return {
            "calibration": self.calibration.to_dict(),
            "effective_q": self.params.effective_q,
            "randomness": self.randomness,
            "reports": self.tally.reports,
            "estimates": rows,
            "covered": int(self.covered.sum()),
            "homogeneous_calibration": None if self.homogeneous is None else self.homogeneous.to_dict(),
            "ledger": self.ledger,
        }

    def render(self) -> str:
        """Human-readable report."""
        c = self.calibration
        e = self.estimates
        lines = [
            (f"sufficientdp demo: N = {c.population} people, L = {c.bits} bits, k = {c.reports}, "
             f"epsilon = {c.epsilon:g} (lambda = {c.lam:.4g})"),
            f"calibration ({c.method}): q = {c.q:.5f}  [{c.guarantee}]",
            (f"  local DP would need q = {c.local_q:.5f}; standard error {c.gain_vs_local:.1f}x smaller here "
             f"({c.sigma_per_sqrt_n:.3f} vs {c.local_sigma_per_sqrt_n:.3f} per sqrt(N))"),
            *([] if self.homogeneous is None else [
                (f"  the paper's homogeneous configuration alone would allow q = {self.homogeneous.q:.5f} "
                 f"({self.homogeneous.sigma_per_sqrt_n:.3f} per sqrt(N)), a bound for that configuration only "
                 f"(not the worst case); covering every collection costs "
                 f"{c.sigma_per_sqrt_n / self.homogeneous.sigma_per_sqrt_n:.2f}x in standard error")]),
            (f"randomized {self.tally.reports} reports with q = {self.params.effective_q:.10g} (exact dyadic), "
             f"randomness: {self.randomness}; anonymized into per-bit counts"),
            "",
            f"{'bit':>4} {'true':>9} {'estimate':>11} {'95% CI':>25} {'in CI':>6}",
        ]
        for j in range(e.bits):
            lines.append(f"{j:>4} {int(self.truth[j]):>9} {e.estimate[j]:>11.1f} "
                         f"{'[' + f'{e.lower[j]:.1f}, {e.upper[j]:.1f}' + ']':>25} "
                         f"{'yes' if self.covered[j] else 'NO':>6}")
        lines.append("")
        lines.append(f"{int(self.covered.sum())} of {e.bits} true counts inside their {100 * e.confidence_level:g}% "
                     f"intervals (expected about {e.confidence_level * e.bits:.1f}); standard error {e.std_error[0]:.1f}")
        if self.ledger is not None:
            g, b = self.ledger, self.ledger["budget"]
            joined = [x["campaign"] for x in g["campaigns"] if x["allowed"]]
            refused = [x for x in g["campaigns"] if not x["allowed"]]
            lines.append(f"a device with a privacy budget of epsilon {b['epsilon']:g}, eta {b['eta']:.3g} per "
                         f"{b['period'] / 86400:g} days joins daily campaigns of this guarantee ({', '.join(joined)}) "
                         f"and DECLINES {refused[0]['campaign']} ({refused[0]['reason']}); it sends nothing, so "
                         "the collector sees silence")
        for note in c.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def run_demo(*, population: int = 100_000, bits: int = 16, epsilon: float = 1.0, beta: float = 3.0,
             reports: int = 1, seed: int | None = None, method: str = "proven", eta: float | None = None,
             progress: Any = None) -> DemoResult:
    """Run the whole flow once. ``seed=None`` uses the CSPRNG for the randomizer.

    Raises:
        ParameterError: population, bits or reports out of range, or together more than :data:`MAX_DEMO_BYTES`
            of arrays (:func:`demo_bytes`; checked before any work), or a calibration argument out of range.
    """
    from ._validation import MAX_BITS, MAX_POPULATION, check_int, check_reports

    population = check_int("population", population, minimum=1, maximum=MAX_POPULATION)
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    reports = check_reports(reports)
    need = demo_bytes(population, bits, reports)
    if need > MAX_DEMO_BYTES:
        most = MAX_DEMO_BYTES // demo_bytes(1, bits, reports)
        raise ParameterError(
            f"population must be in [1, {most}] for the in-memory demo at bits = {bits} and reports = {reports} "
            f"(it holds every person's vector and reports: {need / 1e9:.3g} GB, at most {MAX_DEMO_BYTES / 1e9:g} GB); "
            f"got {population}")
    compare = method == "proven"  # the paper's homogeneous configuration alone, to price the proof
    phases = Phases(progress, 2 if compare else 1)  # one bar for both calibrations
    cal = calibrate(bits=bits, population=population, epsilon=epsilon, beta=beta, reports=reports, method=method,
                    eta=eta, progress=phases.of(0))
    phases.end(0)
    homo = None
    if compare:
        homo = calibrate(bits=bits, population=population, epsilon=epsilon, reports=reports, method="homogeneous",
                         eta=eta, progress=phases.of(1))
        phases.end(1)
    sim_rng = np.random.default_rng(seed)
    truth_data = skewed_population(cal.population, cal.bits, sim_rng)
    params = RandomizationParams(bits=cal.bits, q=cal.q, reports=cal.reports)
    source = as_source(np.random.default_rng(None if seed is None else seed + 1) if seed is not None else None)
    randomized = Randomizer(params, rng=source).randomize_packed(pack_bits(truth_data))
    t = tally_packed(randomized, cal.bits)
    est = estimate_bits(t, q=params.effective_q, reports=params.reports)
    return DemoResult(calibration=cal, params=params, truth=truth_data.sum(axis=0).astype(np.int64), tally=t,
                      estimates=est, randomness=source.name, homogeneous=homo, ledger=ledger_demo(cal))


def ledger_demo(cal: Calibration, *, campaigns: int = 3) -> dict[str, Any]:
    """A device's privacy ledger (:mod:`sufficientdp.collection.ledger`, issue 14) facing one campaign a day with
    this calibration's guarantee and a budget of ``campaigns - 1`` of them per 30 days: it joins the first ones and
    declines the last. Returns ``{"budget", "campaigns": [{"campaign", "day", "allowed", "reason"}]}``."""
    from .collection.ledger import Budget, Ledger, Spend

    eta = cal.eta_at_q if cal.eta_at_q is not None else (cal.eta_target or 0.0)
    eta = 0.0 if eta <= 0 else min(eta, 0.5)
    n = campaigns - 1
    budget = Budget(epsilon=n * cal.epsilon, eta=min(0.99, n * eta) if eta > 0 else 1e-12, period=30 * 86400.0)
    ledger = Ledger(budget=budget)
    out = []
    for day in range(campaigns):
        name = f"day-{day + 1}"
        d = ledger.decide(campaign=name, epsilon=cal.epsilon, eta=eta, now=day * 86400.0)
        if d.allowed:
            ledger = ledger.record(Spend(campaign=name, family="daily", epsilon=cal.epsilon, eta=eta,
                                         at=day * 86400.0))
        out.append({"campaign": name, "day": day, "allowed": d.allowed, "reason": d.reason})
    return {"budget": {"epsilon": budget.epsilon, "eta": budget.eta, "period": budget.period}, "campaigns": out}


# ------------------------------------------------------------------------------------------ collector demo
#: Most people the collector demo simulates (each one makes three HTTP requests).
MAX_COLLECTOR_POPULATION = 100_000
#: Largest L the collector demo accepts (the collector's background calibration takes minutes beyond: keep it
#: short).
MAX_COLLECTOR_BITS = 16
#: Simulated people reporting at the same time.
WORKERS = 4
#: Late arrivals after the first release, whose reports alone are too few for a second one.
LATE_PEOPLE = 10


@dataclass(frozen=True, slots=True)
class CollectorDemoResult:
    """What the collector demo did: the campaign, the release, the truth and the two refusals.

    Attributes:
        campaign: the campaign object served by the collector (without the token key's modulus).
        release: the release object (per-bit ``count``, ``estimate``, ``lower``, ``upper``, ``std_error``).
        truth: true number of people with each bit set, among the ``population`` people released.
        frequencies: the true bit frequencies the population was drawn from.
        population: people who reported before the release.
        late_people: people who reported after it (too few for a second release).
        crowd_refusal, credential_refusal: ``{"refused", "status", "code", "message"}`` of the second release
            and of a second report under an already used credential.
        randomness: the Reporters' random source (``numpy-generator`` when seeded: simulation only).
        url: where the collector listened (stopped since).
        database: the kept database URL, or None for the deleted temporary one.
        seconds: wall-clock time of the run.
        ledger: a device with a privacy ledger (:class:`sufficientdp.client.LedgerStore`) joins the campaign, then
            declines a second campaign of the same family over its budget: ``{"budget", "joined", "declined",
            "decision", "reports_sent_to_declined"}`` (issue 14).
    """

    campaign: dict[str, Any]
    release: dict[str, Any]
    truth: np.ndarray
    frequencies: np.ndarray
    population: int
    late_people: int
    crowd_refusal: dict[str, Any]
    credential_refusal: dict[str, Any]
    randomness: str
    url: str
    database: str | None
    seconds: float
    ledger: dict[str, Any] | None = None

    @property
    def covered(self) -> np.ndarray:
        """Whether each true count lies in the release's confidence interval."""
        est = self.release["estimates"]
        lower = np.array([e["lower"] for e in est], dtype=float)
        upper = np.array([e["upper"] for e in est], dtype=float)
        return (lower <= self.truth) & (self.truth <= upper)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: ``campaign``, ``release`` (estimates with ``true`` and ``covered``), ``checks``."""
        release = dict(self.release)
        rows = [dict(e) for e in release["estimates"]]
        for r, t, c, f in zip(rows, self.truth, self.covered, self.frequencies):
            r["true"] = int(t)
            r["frequency"] = float(f)
            r["covered"] = bool(c)
        release["estimates"] = rows
        return {
            "campaign": self.campaign,
            "release": release,
            "checks": {
                "covered": int(self.covered.sum()),
                "bits": len(rows),
                "crowd_threshold": self.crowd_refusal,
                "rate_limit": self.credential_refusal,
                "ledger": self.ledger,
            },
            "population": self.population,
            "late_people": self.late_people,
            "randomness": self.randomness,
            "url": self.url,
            "database": self.database,
            "seconds": self.seconds,
        }

    def render(self) -> str:
        """Human-readable report."""
        c = self.campaign
        r = self.release
        k = int(c["reports_per_person"])
        how = ("calibrated by the collector, proven for every collection" if c["calibrated"]
               else "given, checked by the collector")
        guarantee = textwrap.wrap(f"guarantee: {c['guarantee']}", width=113)
        lines = [
            (f"sufficientdp demo --collector: campaign {c['id']} on a loopback collector, L = {c['bits']} bits, "
             f"k = {k}, N_min = {c['crowd_size']}, rate limit: {c['rate_limit']}"),
            (f"  q = {c['q']:.10g} = {c['q_numerator']}/2^{c['precision']} ({how}); epsilon = {c['epsilon']:g}, "
             f"target eta = {c['eta']:g}, proven eta bound at q (all collections) = {c['eta_at_q']:.6g}"),
            *("  " + line for line in guarantee),
            (f"{self.population} simulated people each fetched the campaign, obtained {k} blind-signature "
             f"token(s) with their own credential and sent {k} locally randomized report(s) "
             f"(randomness: {self.randomness})"),
            f"release {r['id']}: {r['reports']} reports = {r['people']:g} people; {100 * r['level']:g}% intervals",
            "",
            f"{'bit':>4} {'freq':>6} {'true':>7} {'estimate':>10} {'CI':>22} {'in CI':>6}",
        ]
        for e, t, f, ok in zip(r["estimates"], self.truth, self.frequencies, self.covered):
            ci = f"[{e['lower']:.1f}, {e['upper']:.1f}]"
            lines.append(f"{e['bit']:>4} {f:>6.3f} {int(t):>7} {e['estimate']:>10.1f} {ci:>22} "
                         f"{'yes' if ok else 'NO':>6}")
        n_bits = len(r["estimates"])
        lines.append(f"{int(self.covered.sum())} of {n_bits} true counts inside their intervals "
                     f"(expected about {r['level'] * n_bits:.1f})")
        lines.append("")
        for label, ref in ((f"second release after {self.late_people} late people", self.crowd_refusal),
                           ("a repeated credential", self.credential_refusal)):
            verdict = f"refused ({ref['status']} {ref['code']})" if ref["refused"] else "NOT refused"
            lines.append(f"{label}: {verdict}: {ref['message']}")
        if self.ledger is not None:
            g, b = self.ledger, self.ledger["budget"]
            lines.append(f"a device with a privacy budget (epsilon {b['epsilon']:g}, eta {b['eta']:.3g} per "
                         f"{b['period'] / 86400:g} days) joined campaign {g['joined']} and DECLINED campaign "
                         f"{g['declined']} of the same family ({g['decision']['reason']}); it sent nothing "
                         f"({g['reports_sent_to_declined']} reports at the collector, which cannot tell a refusal "
                         "from silence)")
        where = f"database kept at {self.database}" if self.database is not None else "temporary database deleted"
        lines.append(f"done in {self.seconds:.1f} s; collector at {self.url} stopped; {where}")
        return "\n".join(lines)


#: The campaign family of the collector demo's campaigns (what a device's privacy ledger records).
DEMO_FAMILY = "sufficientdp demo"


def _missing_extras() -> None:
    """Raise a one-line ImportError naming the extras if the service or client dependencies are missing."""
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn", "httpx", "cryptography") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError("demo --collector needs the 'service' and 'client' extras (missing: "
                          f"{', '.join(missing)}): pip install 'sufficientdp[service,client]'")


class _LoopbackCollector:
    """The collector app served by uvicorn on 127.0.0.1 at a free port, in a background thread."""

    def __init__(self, app: Any) -> None:
        import socket
        import threading

        import uvicorn

        self.app = app
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))  # the socket is handed to uvicorn: no race for the port
        self.port = int(self.socket.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        # log_config=None leaves the process's logging alone; the access log is off (docs/collector.md).
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, access_log=False, log_config=None,
                                server_header=False, proxy_headers=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]},
                                       name=f"sufficientdp-demo-collector-{self.port}", daemon=True)

    def __enter__(self) -> _LoopbackCollector:
        import time

        self.thread.start()
        deadline = time.monotonic() + 30.0
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise SufficientDPError(f"the loopback collector did not start on port {self.port}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=30.0)
        self.socket.close()
        self.app.state.jobs.close()  # lifespan is off: stop the calibration jobs here
        self.app.state.storage.close()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _refusal(status: int | None, code: str, message: str) -> dict[str, Any]:
    return {"refused": status is not None and 400 <= status < 500, "status": status, "code": code,
            "message": message}


def _http_error(resp: Any) -> SufficientDPError:
    """The collector's error answer as a one-line error (``CollectorError`` carries status and code)."""
    from .client.reporter import CollectorError

    try:
        err = resp.json()["error"]
        code, message = str(err["code"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "", f"HTTP {resp.status_code}"
    return CollectorError(f"the collector refused ({resp.status_code} {code}): {message}", status=resp.status_code,
                          code=code)


def run_collector_demo(*, population: int = 1000, bits: int = 4, epsilon: float = 1.0, eta: float | None = None,
                       crowd_size: int = 300, reports: int = 1, q: float | None = None, seed: int | None = None,
                       database: str | None = None, progress: Any = None,
                       status: Callable[[str], None] | None = None) -> CollectorDemoResult:
    """Run the collection flow of the HTTP collector end to end on loopback.

    Starts the collector (:func:`sufficientdp.service.create_app`) with uvicorn on 127.0.0.1 in a background
    thread, on a temporary SQLite database (deleted afterwards) unless ``database`` is given; creates a campaign
    (rate limit ``tokens``; q calibrated by the collector with the proven method unless given); lets
    ``population`` simulated people with known true bit frequencies (:func:`skewed_population`) each report
    through their own :class:`sufficientdp.client.Reporter` and credential; makes a release; then shows that a
    second release from :data:`LATE_PEOPLE` late people (fewer than N_min) is refused (``crowd_too_small``) and
    that a repeated credential is refused (``token_already_issued``). The collector is stopped before returning.

    Args:
        population: people reporting before the release, in [crowd_size, 100000].
        bits: L, in [1, 16] (the collector calibrates q in a background job: about 4 s for L = 4, N_min = 300).
        epsilon: privacy level, > 0.
        eta: target ``P[R > e^epsilon]`` at N_min (default 0.001).
        crowd_size: N_min, in [2, population].
        reports: k, reports per person.
        q: flip probability in (0, 0.5) to check instead of calibrating, or None.
        seed: seeds the simulation (``skewed_population(n, L, default_rng(seed))``) and gives person i the
            generator ``default_rng(SeedSequence(seed).spawn(n)[i])`` (simulation only); None draws the reports from
            the CSPRNG. Token nonces and blinding factors always come from :mod:`secrets`.
        database: a database URL to keep (``sqlite:///demo.db``, ``postgresql://...``), or None.
        progress: optional ``progress(done, total)`` callback while the people submit.
        status: optional callback receiving one-line messages on the stages (after the arguments are checked).

    Returns:
        A :class:`CollectorDemoResult`.

    Raises:
        ParameterError: an argument out of range (population below the crowd size, ...).
        ImportError: the ``service`` / ``client`` extras are missing.
        SufficientDPError: the collector refused a step that should succeed (e.g. ``target_not_met`` for q).
    """
    import tempfile
    import time
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from ._validation import check_int
    from .collection.campaign import Campaign

    start = time.monotonic()
    population = check_int("population", population, minimum=2, maximum=MAX_COLLECTOR_POPULATION)
    bits = check_int("bits", bits, minimum=1, maximum=MAX_COLLECTOR_BITS)
    spec = Campaign(name="sufficientdp demo", bits=bits, epsilon=epsilon, crowd_size=crowd_size,
                    reports_per_person=reports, q=q, rate_limit="tokens", eta=DEFAULT_ETA if eta is None else eta)
    if population < spec.crowd_size:
        raise ParameterError(f"population must be at least the crowd size N_min = {spec.crowd_size} (a release "
                             f"needs k * N_min reports); got {population}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ParameterError(f"seed must be None or an integer >= 0; got {seed!r}")
    if database is not None and (not isinstance(database, str) or not database.strip()):
        raise ParameterError(f"database must be a database URL or file path; got {database!r}")
    _missing_extras()

    import httpx

    from .client.device import LedgerStore
    from .client.reporter import CollectorError, Reporter, _default_client, wait_for_campaign
    from .collection.ledger import Budget
    from .collection.tokens import TokenKey
    from .service.app import create_app

    late = min(LATE_PEOPLE, spec.crowd_size - 1)
    sim_rng = np.random.default_rng(seed)
    values = skewed_population(population + late, bits, sim_rng)
    frequencies = 0.6 * 0.75 ** np.arange(bits)
    if bits >= 2:  # bit 1 copies bit 0 for a third of the people
        frequencies[1] = (2 * frequencies[1] + frequencies[0]) / 3
    person_rngs: list[Any] = ([np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(population
                                                                                                    + late)]
                              if seed is not None else [None] * (population + late))
    admin = secrets.token_hex(16)
    headers = {"authorization": f"Bearer {admin}"}

    token_key: TokenKey | None = None  # pinned from the creation response: the creator is the deployment

    def person(i: int) -> Any:
        reporter = Reporter(url, cid, credential=f"demo-person-{i}", client=client, rng=person_rngs[i],
                            backoff=0.05, token_key=token_key, bits=spec.bits,
                            max_reports_per_person=spec.reports_per_person)
        try:
            return reporter.report(values[i])
        finally:
            reporter.close()

    with tempfile.TemporaryDirectory(prefix="sufficientdp-demo-", ignore_cleanup_errors=True) as tmp:
        db_url = database if database is not None else os.path.join(tmp, "collector.db")
        try:
            app = create_app(db_url, admin_token=admin)
        except (SufficientDPError, ImportError):
            raise
        except Exception as exc:  # sqlite3 / psycopg errors: one line naming the URL
            raise ParameterError(f"database: cannot open {db_url!r}: {type(exc).__name__}: {exc}") from None
        # One HTTP client for all simulated people, as the Reporter's default one (no keep-alive, no cookies, no
        # redirects; building one per person costs ~50 ms of TLS set-up that a loopback demo does not use).
        with (_LoopbackCollector(app) as collector, _default_client(10.0) as client,
              httpx.Client(base_url=collector.url, timeout=600.0) as ops):
            url = collector.url
            if status is not None:
                how = "checks the given q" if spec.q is not None else "calibrates q (proven bound): a few seconds"
                status(f"collector listening on {url}; creating the campaign (the collector {how} in a "
                       "background job) ...")
            # 1. The campaign: 202, then the collector calibrates q (q = null; proven bound) or checks the given q
            #    in a background job; wait until the campaign is active.
            resp = ops.post("/v1/campaigns", headers=headers, json={
                "name": spec.name, "bits": spec.bits, "epsilon": spec.epsilon, "eta": spec.eta,
                "crowd_size": spec.crowd_size, "reports_per_person": spec.reports_per_person, "q": spec.q,
                "rate_limit": spec.rate_limit, "family": DEMO_FAMILY})
            if resp.status_code != 202:
                raise _http_error(resp)
            created = resp.json()
            cid = created["id"]
            if created.get("token_key") is not None:  # pinned from the creation answer (the creator is trusted)
                token_key = TokenKey.from_dict(created["token_key"])
            try:
                campaign = wait_for_campaign(url, cid, client=ops, timeout=app.state.jobs.time_limit + 60.0)
            except CollectorError as exc:
                raise CollectorError(f"the collector refused ({exc.code}): {str(exc).split('): ', 1)[-1]}",
                                     status=exc.status, code=exc.code, parameter=exc.parameter) from None
            for counter in ("pending_reports", "released_reports", "releases"):  # all 0 now
                campaign.pop(counter, None)
            # 2. The people report, each through its own Reporter and credential.
            # Several people at a time (HTTP and the database's fsync release the GIL); each Reporter has its
            # own generator, so the reports do not depend on the order in which people are served.
            pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="sufficientdp-demo-person")
            try:
                for done, future in enumerate(as_completed([pool.submit(person, i) for i in range(population)])):
                    future.result()
                    if progress is not None:
                        progress(done + 1, population)
            finally:  # on an error or Ctrl-C, people not yet started do not report
                pool.shutdown(wait=True, cancel_futures=True)
            # 3. The release covers every pending report.
            resp = ops.post(f"/v1/campaigns/{cid}/releases", headers=headers)
            if resp.status_code != 201:
                raise _http_error(resp)
            release = resp.json()
            # 4. A few late people are too few for a second release; a used credential gets no new tokens.
            for i in range(population, population + late):
                person(i)
            resp = ops.post(f"/v1/campaigns/{cid}/releases", headers=headers)
            err = resp.json().get("error", {}) if resp.status_code != 201 else {}
            crowd = _refusal(resp.status_code, err.get("code", ""), err.get("message", "a second release was made"))
            try:
                person(0)
                cred = _refusal(200, "", "a second report under credential demo-person-0 was accepted")
            except CollectorError as exc:
                cred = _refusal(exc.status, exc.code, str(exc).split("): ", 1)[-1])
            # 5. A device with a privacy ledger (issue 14): its budget allows one campaign of this guarantee per
            #    30 days. It joins this campaign; a second campaign of the same family (identical configuration,
            #    so the collector reuses the calibration at once) would exceed it: the device declines locally and
            #    sends nothing.
            resp = ops.post("/v1/campaigns", headers=headers, json={
                "name": spec.name + " (next round)", "bits": spec.bits, "epsilon": spec.epsilon, "eta": spec.eta,
                "crowd_size": spec.crowd_size, "reports_per_person": spec.reports_per_person, "q": spec.q,
                "rate_limit": spec.rate_limit, "family": DEMO_FAMILY})
            if resp.status_code != 202:
                raise _http_error(resp)
            cid2, key2 = resp.json()["id"], TokenKey.from_dict(resp.json()["token_key"])
            wait_for_campaign(url, cid2, client=ops, timeout=app.state.jobs.time_limit + 60.0)
            budget = Budget(epsilon=1.5 * spec.epsilon, eta=min(0.99, max(2.5 * float(campaign["eta_at_q"]), 1e-9)),
                            period=30 * 86400.0)
            store = LedgerStore(os.path.join(tmp, "device-ledger.json"), budget=budget)
            receipts = []
            for c_id, c_key in ((cid, token_key), (cid2, key2)):
                device = Reporter(url, c_id, credential="demo-device-with-ledger", client=client, backoff=0.05,
                                  token_key=c_key, bits=spec.bits, max_reports_per_person=spec.reports_per_person,
                                  ledger=store, rng=person_rngs[0])
                try:
                    receipts.append(device.report(values[0]))
                finally:
                    device.close()
            if receipts[0].declined or not receipts[1].declined:
                raise SufficientDPError("the demo device's ledger did not decide as expected")
            decision = receipts[1].decision
            assert decision is not None
            ledger = {"budget": {"epsilon": budget.epsilon, "eta": budget.eta, "period": budget.period},
                      "family": DEMO_FAMILY, "joined": cid, "declined": cid2, "decision": decision.to_dict(),
                      "reports_sent_to_declined": int(ops.get(f"/v1/campaigns/{cid2}").json()["pending_reports"])}
    campaign.pop("token_key", None)
    return CollectorDemoResult(
        campaign=campaign, release=release, truth=values[:population].sum(axis=0).astype(np.int64),
        frequencies=frequencies, population=population, late_people=late, crowd_refusal=crowd,
        credential_refusal=cred, randomness=as_source(person_rngs[0]).name, url=url, database=database,
        seconds=time.monotonic() - start, ledger=ledger)


# ------------------------------------------------------------------------------------------ demo reports
@dataclass(frozen=True, slots=True)
class DemoReports:
    """The two pages the collector demo ends with (``make demo``): the design report of its campaign's
    parameters and the release report of its release."""

    design: str
    release: str
    database: str


def write_demo_reports(result: CollectorDemoResult, directory: str | os.PathLike[str]) -> DemoReports:
    """Write ``design.html`` (``report design`` at the campaign's L, N_min, epsilon, eta, k) and ``release.html``
    (``report release`` of the demo's release) into ``directory``, from a collector demo run that kept its
    database (``run_collector_demo(database=...)``).

    Raises:
        ParameterError: the demo did not keep its database.
        ImportError: the ``report`` extra is missing.
    """
    import shlex
    from pathlib import Path

    from .report.design import design_report, write_html
    from .report.release import release_command, release_report

    if result.database is None:
        raise ParameterError("the demo's reports need its database: run the collector demo with database=...")
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    c = result.campaign
    design_path, release_path = folder / "design.html", folder / "release.html"
    k = int(c["reports_per_person"])
    words = ["sufficientdp", "report", "design", "--bits", str(c["bits"]), "--population", str(c["crowd_size"]),
             "--epsilon", repr(float(c["epsilon"])), "--eta", repr(float(c["eta"]))]
    words += ["--reports", str(k)] if k != 1 else []
    design = design_report(bits=int(c["bits"]), population=int(c["crowd_size"]), epsilon=float(c["epsilon"]),
                           eta=float(c["eta"]), reports=k,
                           command=shlex.join(words + ["--output", str(design_path)]))
    write_html(design_path, design.html)
    command = release_command(database=result.database, campaign=str(c["id"]), release=str(result.release["id"]),
                              output=str(release_path))
    release = release_report(database=result.database, campaign=str(c["id"]), release=str(result.release["id"]),
                             command=command)
    write_html(release_path, release.html)
    return DemoReports(design=str(design_path), release=str(release_path), database=result.database)
