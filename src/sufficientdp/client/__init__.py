"""Client of the collector service: randomize locally, obtain rate-limiting tokens, submit (extra ``client``).

Needs ``httpx`` (``pip install 'sufficientdp[client]'``); the token arithmetic is pure Python
(:mod:`sufficientdp.collection.tokens`).
"""

from .device import LedgerError, LedgerStore, MemoError, MemoStore
from .reporter import CampaignInfo, CollectorError, Reporter, ReportLimitError, ReportReceipt, wait_for_campaign

__all__ = ["CampaignInfo", "CollectorError", "LedgerError", "LedgerStore", "MemoError", "MemoStore",
           "ReportLimitError", "ReportReceipt", "Reporter", "wait_for_campaign"]
