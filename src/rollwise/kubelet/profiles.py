"""How the simulated kubelet behaves: the timings of a scenario's ``kubelet:`` block and per-image behaviours.

A profile is a frozen value; the scenario gives four timings (``startSeconds``, ``readySeconds``, ``stopSeconds``,
``terminationSeconds``) and per-image behaviours. The remaining constants are not in the scenario file; their defaults
follow what a real kubelet does, and a test or a library user may change them by keyword:

- ``crash_run_seconds = 2``: how long a crash-looping container runs before it exits (a typical bad config is
  found within a second or two of start).
- ``crash_exited_seconds = 1``: how long the ``terminated`` state is visible before the next pod sync reports
  ``CrashLoopBackOff`` (the kubelet's pod worker re-syncs about a second after a container dies).
- ``crash_backoff_seconds = 10`` doubling to ``crash_backoff_max_seconds = 300``: the kubelet's container restart
  back-off (10 s initial, factor 2, 5 min cap), measured from the container's exit.
- ``pull_error_seconds = 1``: how long ``ErrImagePull`` shows before the kubelet reports ``ImagePullBackOff``.
- ``pull_backoff_seconds = 10`` doubling to ``pull_backoff_max_seconds = 300``: the kubelet's image pull back-off,
  which uses the same 10 s / 300 s figures as the restart back-off.
- ``kill_restart_seconds = 0``: delay between a killed container's exit and its restart. The kubelet restarts a
  container's first exit without back-off, so the default restarts it at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import FieldError

__all__ = [
    "CRASH_LOOP_BACK_OFF",
    "CREATE_CONTAINER_CONFIG_ERROR",
    "ERR_IMAGE_PULL",
    "IMAGE_FAILURES",
    "IMAGE_PULL_BACK_OFF",
    "ImageBehaviour",
    "KubeletProfile",
    "parse_kubelet",
]

IMAGE_PULL_BACK_OFF = "ImagePullBackOff"
ERR_IMAGE_PULL = "ErrImagePull"
CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError"
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
IMAGE_FAILURES = (CRASH_LOOP_BACK_OFF, CREATE_CONTAINER_CONFIG_ERROR, ERR_IMAGE_PULL, IMAGE_PULL_BACK_OFF)
"""The supported ``fail:`` values, sorted as Kubernetes lists supported values."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageBehaviour:
    """What happens to a container that runs one image. ``None`` timings fall back to the profile's."""

    fail: str | None = None
    ready: bool = True
    start_seconds: float | None = None
    ready_seconds: float | None = None
    hook_release_seconds: float | None = None
    """The application running this image releases a pod's pre-delete hook this long after the mark (None: the
    profile's ``hook_release_seconds``)."""
    stop_seconds: float | None = None
    """How long this image's process takes to exit after SIGTERM (None: the profile's ``stop_seconds``)."""

    def __post_init__(self) -> None:
        if self.fail is not None and self.fail not in IMAGE_FAILURES:
            raise ValueError(f"unsupported image failure {self.fail!r}; supported: {', '.join(IMAGE_FAILURES)}")


_NORMAL = ImageBehaviour()


@dataclass(frozen=True, slots=True, kw_only=True)
class KubeletProfile:
    """The simulated kubelet's timings (seconds of virtual time) and per-image behaviours (exact image string)."""

    start_seconds: float = 5.0
    ready_seconds: float = 2.0
    termination_seconds: float = 3.0
    stop_seconds: float = 0.0
    """How long a container's process takes to exit after SIGTERM (0: at once, as nginx or etcd do). One that
    takes longer than the grace period is killed at its end (exit code 137)."""
    images: Mapping[str, ImageBehaviour] = field(default_factory=dict)
    crash_run_seconds: float = 2.0
    crash_exited_seconds: float = 1.0
    crash_backoff_seconds: float = 10.0
    crash_backoff_max_seconds: float = 300.0
    pull_error_seconds: float = 1.0
    pull_backoff_seconds: float = 10.0
    pull_backoff_max_seconds: float = 300.0
    kill_restart_seconds: float = 0.0
    hook_release_seconds: float | None = None
    """The application's drain agent: it removes a pod's pre-delete hook labels and finalizers this long after the
    controller marks the pod PreparingDelete (api/lifecycle.py). None: no agent releases a hook by itself (a
    ``releaseHook`` step, or a person with kubectl, does)."""

    def __post_init__(self) -> None:
        for name in ("start_seconds", "ready_seconds", "termination_seconds", "stop_seconds", "crash_exited_seconds",
                     "pull_error_seconds", "kill_restart_seconds"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0")
        # A back-off cycle must advance time, or the timeline would never move past it.
        for name in ("crash_run_seconds", "crash_backoff_seconds", "pull_backoff_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0")
        if self.crash_backoff_max_seconds < self.crash_backoff_seconds:
            raise ValueError("crash_backoff_max_seconds must be >= crash_backoff_seconds")
        if self.pull_backoff_max_seconds < self.pull_backoff_seconds:
            raise ValueError("pull_backoff_max_seconds must be >= pull_backoff_seconds")

    def behaviour(self, image: str) -> ImageBehaviour:
        """The behaviour configured for this exact image string; unknown images behave normally."""
        return self.images.get(image, _NORMAL)

    def start_delay(self, image: str) -> float:
        """Seconds from pod creation to the container running (or to its first failure), per image."""
        b = self.behaviour(image)
        return self.start_seconds if b.start_seconds is None else b.start_seconds

    def hook_release_delay(self, images: list[str]) -> float | None:
        """Seconds from a pod's PreparingDelete mark to its application releasing the hook: the longest of its
        containers' images that say, else the profile's; None: nothing releases it by itself."""
        said = [b.hook_release_seconds for i in images if (b := self.behaviour(i)).hook_release_seconds is not None]
        return max(said) if said else self.hook_release_seconds

    def stop_delay(self, image: str) -> float:
        """Seconds from SIGTERM to the container's exit, per image."""
        b = self.behaviour(image)
        return self.stop_seconds if b.stop_seconds is None else b.stop_seconds

    def ready_delay(self, image: str) -> float:
        """Seconds from the container running to its readiness passing, per image."""
        b = self.behaviour(image)
        return self.ready_seconds if b.ready_seconds is None else b.ready_seconds


_TOP_KEYS = {"startSeconds": "start_seconds", "readySeconds": "ready_seconds",
             "terminationSeconds": "termination_seconds", "stopSeconds": "stop_seconds",
             "hookReleaseSeconds": "hook_release_seconds"}
_TOP_ALLOWED = (*sorted([*_TOP_KEYS, "images", "apps"]),)
_IMAGE_KEYS = {"startSeconds": "start_seconds", "readySeconds": "ready_seconds",
               "hookReleaseSeconds": "hook_release_seconds", "stopSeconds": "stop_seconds"}
_IMAGE_ALLOWED = ("fail", "hookReleaseSeconds", "ready", "readySeconds", "startSeconds", "stopSeconds")


def _supported(values: tuple[str, ...]) -> str:
    return "supported values: " + ", ".join(f'"{v}"' for v in values)


def _seconds(value: object, path: str, errors: list[FieldError]) -> float | None:
    """A non-negative finite number of seconds, or None after recording why not."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        errors.append(FieldError(path=path, value=value, rule="must be a number of seconds"))
        return None
    if not math.isfinite(value):
        errors.append(FieldError(path=path, value=value, rule="must be a finite number"))
        return None
    if value < 0:
        errors.append(FieldError(path=path, value=value, rule="must be greater than or equal to 0"))
        return None
    return float(value)


def _image_path(path: str, image: object) -> str:
    if isinstance(image, str):
        escaped = image.replace("\\", "\\\\").replace('"', '\\"')
        return f'{path}.images["{escaped}"]'
    return f"{path}.images[{image}]"


def _parse_image(raw: object, path: str, errors: list[FieldError]) -> ImageBehaviour | None:
    if not isinstance(raw, Mapping):
        errors.append(FieldError(path=path, value=raw, rule="must be a mapping with fail, ready, startSeconds, "
                                                             "readySeconds, hookReleaseSeconds, stopSeconds"))
        return None
    kwargs: dict[str, Any] = {}
    ok = True
    for key, value in raw.items():
        sub = f"{path}.{key}"
        if key == "fail":
            if value is not None and value not in IMAGE_FAILURES:
                errors.append(FieldError(path=sub, kind="Unsupported value", value=value,
                                         rule=_supported(IMAGE_FAILURES)))
                ok = False
            else:
                kwargs["fail"] = value
        elif key == "ready":
            if not isinstance(value, bool):
                errors.append(FieldError(path=sub, value=value, rule="must be true or false"))
                ok = False
            else:
                kwargs["ready"] = value
        elif key in _IMAGE_KEYS:
            seconds = _seconds(value, sub, errors)
            ok = ok and seconds is not None
            kwargs[_IMAGE_KEYS[key]] = seconds
        else:
            errors.append(FieldError(path=sub, kind="Unsupported value", value=key, rule=_supported(_IMAGE_ALLOWED)))
            ok = False
    return ImageBehaviour(**kwargs) if ok else None


def parse_kubelet(raw: object, *, path: str = "kubelet") -> tuple[KubeletProfile, list[FieldError]]:
    """Check a scenario's ``kubelet:`` mapping; every problem is a FieldError with its path. Missing → defaults.

    ``apps`` is accepted and ignored here (the application models are parsed elsewhere). Invalid fields fall back to
    their defaults in the returned profile, so callers can still report every error at once.
    """
    if raw is None:
        return KubeletProfile(), []
    if not isinstance(raw, Mapping):
        return KubeletProfile(), [FieldError(path=path, value=raw, rule="must be a mapping")]
    errors: list[FieldError] = []
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        sub = f"{path}.{key}"
        if key in _TOP_KEYS:
            seconds = _seconds(value, sub, errors)
            if seconds is not None:
                kwargs[_TOP_KEYS[key]] = seconds
        elif key == "images":
            if value is None:
                continue
            if not isinstance(value, Mapping):
                errors.append(FieldError(path=sub, value=value, rule="must be a mapping of image to behaviour"))
                continue
            images: dict[str, ImageBehaviour] = {}
            for image, entry in value.items():
                image_path = _image_path(path, image)
                if not isinstance(image, str) or not image:
                    errors.append(FieldError(path=image_path, value=image, rule="must be a non-empty image string"))
                    continue
                behaviour = _parse_image(entry, image_path, errors)
                if behaviour is not None:
                    images[image] = behaviour
            kwargs["images"] = images
        elif key != "apps":
            errors.append(FieldError(path=sub, kind="Unsupported value", value=key, rule=_supported(_TOP_ALLOWED)))
    return KubeletProfile(**kwargs), errors
