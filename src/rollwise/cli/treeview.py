"""The terminal face of a ``RolloutView``: a header and one line per ordinal, drawn with rich.

Colour only repeats what the words and icons already say (Argo Rollouts' colours for its icons), so the output
reads the same under ``NO_COLOR``, through a pipe or in a plain terminal: rich drops the styles there.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from rollwise.projection import RolloutView
from rollwise.projection.model import (
    ICON_BAD,
    ICON_OK,
    ICON_PAUSED,
    ICON_PROGRESSING,
    ICON_WAITING,
    ICON_WARNING,
    RevisionRow,
)

__all__ = ["age", "print_view", "render_view", "status_line", "view_console"]

_ICON_STYLE = {ICON_OK: "green", ICON_BAD: "red", ICON_WARNING: "red", ICON_PROGRESSING: "bright_blue",
               ICON_WAITING: "yellow", ICON_PAUSED: ""}
_KINDS = {"sts": "StatefulSet (apps/v1)", "rsts": "StatefulSet (apps.rollwise.dev)"}


_PIPE_WIDTH = 100_000
"""Into a pipe no line wraps: a grid only pads its rows to its widest cell, and ``print_view`` strips that."""


def view_console() -> Console:
    """A console for the view: the terminal's width, or into a pipe or file as wide as a line is (no wrapping at 80
    nor anywhere, as kubectl's tables; and no colour: rich's own rule, as under ``NO_COLOR``)."""
    console = Console()
    return console if console.is_terminal else Console(width=_PIPE_WIDTH)


def print_view(console: Console, view: RenderableType) -> None:
    """Print a view; into a pipe or file without the blanks rich pads a grid's rows with, so ``grep``, ``diff`` and
    a script read each line as it is shown."""
    if console.is_terminal:
        console.print(view)
        return
    with console.capture() as cap:
        console.print(view)
    console.file.write("".join(line.rstrip() + "\n" for line in cap.get().splitlines()))
    console.file.flush()


def age(seconds: float | None) -> str:
    """kubectl's short age: 45s, 3m12s, 2h5m, 4d."""
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60}s" if s < 600 else f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60}m"
    return f"{s // 86400}d"


def _icon(icon: str) -> Text:
    return Text(icon, style=_ICON_STYLE.get(icon, ""))


def _revision(label: str, rev: RevisionRow | None) -> str:
    if rev is None:
        return f"{label} -"
    images = f" ({', '.join(rev.images)})" if rev.images else ""
    return f"{label} {rev.name}{images}"


def status_line(view: RolloutView) -> str:
    """One line: icon, state and why (``◌ Progressing - waiting for web-2 to become available: ...``)."""
    return f"{view.icon} {view.state} - {view.message}"


def _header(view: RolloutView) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row("Name:", f"{view.title}")
    grid.add_row("Namespace:", view.namespace)
    grid.add_row("Kind:", _KINDS.get(view.kind, view.kind))
    state = Text.assemble(_icon(view.icon), " ", (view.state, _ICON_STYLE.get(view.icon, "")))
    grid.add_row("Status:", state)
    grid.add_row("Message:", view.message)
    strategy = view.strategy
    if view.budget:
        strategy += f"  maxUnavailable {view.budget}"
    if view.partition:
        strategy += f"  partition {view.partition}"
    grid.add_row("Strategy:", f"{strategy}  podManagementPolicy {view.pod_management}")
    grid.add_row("Replicas:", f"desired {view.desired}  current {view.current}  updated {view.updated}  "
                              f"ready {view.ready}  available {view.available}")
    same = view.current_revision is not None and view.update_revision is not None \
        and view.current_revision.name == view.update_revision.name
    grid.add_row("Revisions:", _revision("current+update", view.update_revision) if same else
                 f"{_revision('current', view.current_revision)}   {_revision('update', view.update_revision)}")
    if view.canary is not None:
        grid.add_row("Steps:", view.canary.step)
        grid.add_row("Stable:", view.canary.stable or "-")
        if view.canary.abort:
            grid.add_row("Aborted:", Text(view.canary.abort, style="red"))
    for i, c in enumerate(view.conditions):
        text = f"{c.type}={c.status} {c.reason}" + (f": {c.message}" if c.message else "")
        grid.add_row("Conditions:" if i == 0 else "", text)
    return grid


def _pods(view: RolloutView) -> list[Text]:
    """One line per ordinal, columns aligned as kubectl's tabwriter does. The last column (why) is not padded, so
    a narrow terminal wraps it onto the next line instead of cutting a pod's name short."""
    header = ("", "POD", "REVISION", "ROLE", "STATUS", "READY", "AVAILABLE", "RESTARTS", "AGE")
    rows = [(pod.icon, pod.name, f"{pod.revision} ({pod.tag})" if pod.revision else "-", pod.role or "-",
             pod.status, "yes" if pod.ready else "no", "yes" if pod.available else "no", str(pod.restarts),
             age(pod.age_seconds)) for pod in view.pods]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    lines = [Text("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + "  INFO", style="bold")]
    for pod, cells in zip(view.pods, rows, strict=True):
        line = Text(cells[0].ljust(widths[0]), style=_ICON_STYLE.get(pod.icon, ""))
        line.append("  " + "  ".join(c.ljust(w) for c, w in zip(cells[1:], widths[1:], strict=True)))
        if pod.why:
            line.append("  " + ("rollout waits here: " if pod.waited_on else "") + pod.why,
                        style="bold" if pod.waited_on else "")
        lines.append(line)
    return lines


def render_view(view: RolloutView, *, events: int = 5) -> RenderableType:
    """The whole view: header, the ordinals, and the newest ``events`` events."""
    parts: list[RenderableType] = [_header(view), Text(""), *_pods(view)]
    shown = view.events[-events:] if events else ()
    if shown:
        parts.append(Text(""))
        parts.append(Text("Events:", style="bold"))
        for ev in shown:
            when = age(view.now - ev.at) if ev.at is not None else "-"
            parts.append(Text(f"  {when:>6} ago  {ev.type:<7} {ev.reason:<24} {ev.object}: {ev.message}"))
    return Group(*parts)
