"""The collector's routes, one ``APIRouter`` per resource: :mod:`.campaigns` (create, get, cancel),
:mod:`.reports` (tokens and reports, the participants' calls) and :mod:`.releases` (releases, estimates, release
pages). Each route reaches the app's :class:`~sufficientdp.service.state.ServiceState` through ``Depends``."""
