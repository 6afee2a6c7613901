"""A list or watch request's options, read from its query as kube-apiserver reads them, defaulted and validated.

* Booleans follow apimachinery's query conversion (``http.bool_flag``).
* The watch-list rules (KEP-3157; the WatchList gate is on by default in 1.32 and again from 1.34):
  ``SetListOptionsDefaults`` turns a watch from no resourceVersion or ``"0"`` with neither ``sendInitialEvents`` nor
  ``resourceVersionMatch`` into ``sendInitialEvents=true&resourceVersionMatch=NotOlderThan``, and
  ``ValidateListOptions`` (``apis/meta/internalversion/validation``) refuses the combinations it forbids with a 422
  ``Invalid`` naming the ``ListOptions`` field, in upstream's words.
* A resourceVersion that is not a number, a limit or timeout that is not an int64, and a continue token (this
  server returns every list in one page, so it never hands one out) are 400s, as upstream's storage answers them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rollwise.api.errors import BadRequest, FieldError, Invalid
from rollwise.apiserver.serving.http import bool_flag
from rollwise.cluster.store.watch import parse_resource_version

__all__ = ["INITIAL_EVENTS_END", "ListOptions", "list_options"]

EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""The annotation of the BOOKMARK that ends a watch's initial events (``metav1.InitialEventsAnnotationKey``)."""
_INT64 = range(-(2**63), 2**63)


@dataclass(frozen=True, slots=True)
class ListOptions:
    watch: bool
    resource_version: str
    resource_version_match: str
    send_initial_events: bool | None
    allow_watch_bookmarks: bool
    timeout_seconds: int | None
    limit: int | None

    @property
    def initial_events_end_bookmark(self) -> bool:
        """Whether the watch ends its initial events with the annotated BOOKMARK (only when bookmarks are allowed:
        the cacher sends it under that condition)."""
        return bool(self.send_initial_events) and self.allow_watch_bookmarks

    @property
    def start(self) -> str | None:
        """Where the store's watch starts: ``""`` for a synthetic ADDED per current object, a resourceVersion to
        replay the changes after, or None for the newest with nothing replayed. ``sendInitialEvents=true`` asks for
        the state as ADDED events whatever the resourceVersion (this store always serves its newest state, never
        older than the one asked for); ``false`` with no resourceVersion, or ``"0"``, starts at the newest."""
        if self.send_initial_events:
            return ""
        if self.send_initial_events is False and self.resource_version in ("", "0"):
            return None
        return self.resource_version


def list_options(query: Mapping[str, str]) -> ListOptions:
    """The options of a list or watch request; BadRequest or Invalid as upstream answers malformed ones."""
    watch = bool_flag(query.get("watch"))
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    initial = None if "sendInitialEvents" not in query else bool_flag(query.get("sendInitialEvents"))
    if watch and initial is None and not match and rv in ("", "0"):
        initial, match = True, NOT_OLDER_THAN  # SetListOptionsDefaults, with watch-list on
    options = ListOptions(watch=watch, resource_version=rv, resource_version_match=match,
                          send_initial_events=initial,
                          allow_watch_bookmarks=bool_flag(query.get("allowWatchBookmarks")),
                          timeout_seconds=_int64(query, "timeoutSeconds"), limit=_int64(query, "limit"))
    errors = _watch_errors(options, query) if watch else _list_errors(options, query)
    if errors:  # the handler validates before storage reads the resourceVersion or the token, as upstream's
        raise Invalid(errors=errors, concerns=("ListOptions", "meta.k8s.io"))
    if not watch:  # a watch's resourceVersion is read where the watch opens
        try:
            parse_resource_version(rv)
        except BadRequest as err:
            raise BadRequest(f"invalid resource version: {err.message}") from None
        if query.get("continue"):
            raise BadRequest("invalid continue token: this server returns every list whole and issues no tokens")
    return options


def _list_errors(options: ListOptions, query: Mapping[str, str]) -> list[FieldError]:
    errors = []
    if match := options.resource_version_match:
        if not options.resource_version:
            errors.append(_forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if query.get("continue"):
            errors.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            errors.append(_unsupported(match, (EXACT, NOT_OLDER_THAN, "")))
        if match == EXACT and options.resource_version == "0":
            errors.append(_forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if options.send_initial_events is not None:
        errors.append(FieldError(path="sendInitialEvents", rule="sendInitialEvents is forbidden for list",
                                 kind="Forbidden"))
    return errors


def _watch_errors(options: ListOptions, query: Mapping[str, str]) -> list[FieldError]:
    errors = []
    match = options.resource_version_match
    if options.send_initial_events is not None and match != NOT_OLDER_THAN:
        errors.append(_forbidden(f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}"))
    if match:
        if options.send_initial_events is None:
            errors.append(_forbidden("resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                                     "provided"))
        if match != NOT_OLDER_THAN:
            errors.append(_unsupported(match, (NOT_OLDER_THAN,)))
        if query.get("continue"):
            errors.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
    return errors


def _forbidden(rule: str) -> FieldError:
    return FieldError(path="resourceVersionMatch", rule=rule, kind="Forbidden")


def _unsupported(value: str, supported: tuple[str, ...]) -> FieldError:
    return FieldError(path="resourceVersionMatch", value=value, kind="Unsupported value",
                      rule="supported values: " + ", ".join(f'"{s}"' for s in supported))


def _int64(query: Mapping[str, str], key: str) -> int | None:
    """An integer parameter as Go's ``strconv.ParseInt(s, 10, 64)`` reads it (a sign, then digits only)."""
    text = query.get(key)
    if text is None or text == "":
        return None
    body = text[1:] if text[:1] in "+-" else text
    if not body.isascii() or not body.isdigit():
        raise BadRequest(f'{key}: strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if value not in _INT64:
        raise BadRequest(f'{key}: strconv.ParseInt: parsing "{text}": value out of range')
    return value
