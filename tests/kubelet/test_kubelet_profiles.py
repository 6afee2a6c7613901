"""parse_kubelet and KubeletProfile: defaults, per-image lookups, and every error with its field path."""

from __future__ import annotations

import pytest

from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile, parse_kubelet


def test_missing_block_gives_the_spec_defaults() -> None:
    profile, errors = parse_kubelet(None)
    assert errors == []
    assert (profile.start_seconds, profile.ready_seconds, profile.termination_seconds) == (5.0, 2.0, 3.0)
    assert (profile.crash_backoff_seconds, profile.crash_backoff_max_seconds) == (10.0, 300.0)
    assert dict(profile.images) == {}


def test_full_block_is_parsed_and_apps_is_accepted_and_ignored() -> None:
    raw = {
        "startSeconds": 1,
        "readySeconds": 0.5,
        "terminationSeconds": 0,
        "images": {
            "app:v2-typo": {"fail": "ImagePullBackOff"},
            "app:v2-crash": {"fail": "CrashLoopBackOff"},
            "app:v2-unready": {"ready": False},
            "app:v2-slow": {"startSeconds": 60, "readySeconds": 10},
            "app:v2-fine": {"fail": None},
        },
        "apps": {"etcd": {"model": "quorum"}},
    }
    profile, errors = parse_kubelet(raw)
    assert errors == []
    assert (profile.start_seconds, profile.ready_seconds, profile.termination_seconds) == (1.0, 0.5, 0.0)
    assert profile.behaviour("app:v2-typo") == ImageBehaviour(fail="ImagePullBackOff")
    assert profile.behaviour("app:v2-unready").ready is False
    assert profile.behaviour("app:v2-slow") == ImageBehaviour(start_seconds=60.0, ready_seconds=10.0)
    assert profile.behaviour("app:v2-fine") == ImageBehaviour()


def test_unknown_images_behave_normally_and_per_image_timings_override_the_profile() -> None:
    profile = KubeletProfile(images={"slow": ImageBehaviour(start_seconds=60.0)})
    assert profile.behaviour("app:v1") == ImageBehaviour()
    assert (profile.start_delay("slow"), profile.ready_delay("slow")) == (60.0, 2.0)
    assert (profile.start_delay("app:v1"), profile.ready_delay("app:v1")) == (5.0, 2.0)


SUPPORTED_FAILS = ('supported values: "CrashLoopBackOff", "CreateContainerConfigError", "ErrImagePull", '
                   '"ImagePullBackOff"')
INVALID = [
    ([], ["kubelet: Invalid value: []: must be a mapping"]),
    ({"startSeconds": -1}, ["kubelet.startSeconds: Invalid value: -1: must be greater than or equal to 0"]),
    ({"readySeconds": "2"}, ['kubelet.readySeconds: Invalid value: "2": must be a number of seconds']),
    ({"terminationSeconds": True}, ["kubelet.terminationSeconds: Invalid value: true: must be a number of seconds"]),
    ({"startSeconds": float("inf")}, ["kubelet.startSeconds: Invalid value: inf: must be a finite number"]),
    (
        {"startSecond": 5},
        ['kubelet.startSecond: Unsupported value: "startSecond": supported values: "apps", "hookReleaseSeconds", '
         '"images", "readySeconds", "startSeconds", "stopSeconds", "terminationSeconds"'],
    ),
    ({"images": ["app:v2"]}, ['kubelet.images: Invalid value: ["app:v2"]: must be a mapping of image to behaviour']),
    ({"images": {"app:v2": {"fail": "Boom"}}}, [f'kubelet.images["app:v2"].fail: Unsupported value: "Boom": '
                                                 f"{SUPPORTED_FAILS}"]),
    ({"images": {"app:v2": {"ready": "no"}}}, ['kubelet.images["app:v2"].ready: Invalid value: "no": must be true or '
                                                'false']),
    (
        {"images": {"app:v2": {"readySeconds": -2}}},
        ['kubelet.images["app:v2"].readySeconds: Invalid value: -2: must be greater than or equal to 0'],
    ),
    (
        {"images": {"app:v2": {"crash": True}}},
        ['kubelet.images["app:v2"].crash: Unsupported value: "crash": supported values: "fail", '
         '"hookReleaseSeconds", "ready", "readySeconds", "startSeconds", "stopSeconds"'],
    ),
    (
        {"images": {"app:v2": None}},
        ['kubelet.images["app:v2"]: Invalid value: null: must be a mapping with fail, ready, startSeconds, '
         "readySeconds, hookReleaseSeconds, stopSeconds"],
    ),
    ({"images": {7: {}}}, ["kubelet.images[7]: Invalid value: 7: must be a non-empty image string"]),
    (
        {"startSeconds": -1, "images": {"a": {"fail": "X"}, "b": {"startSeconds": "x"}}},
        [
            "kubelet.startSeconds: Invalid value: -1: must be greater than or equal to 0",
            f'kubelet.images["a"].fail: Unsupported value: "X": {SUPPORTED_FAILS}',
            'kubelet.images["b"].startSeconds: Invalid value: "x": must be a number of seconds',
        ],
    ),
]


@pytest.mark.parametrize(
    ("raw", "messages"),
    INVALID,
    ids=["not-a-mapping", "negative-start", "string-ready", "bool-termination", "infinite", "unknown-key",
         "images-not-mapping", "unsupported-fail", "ready-not-bool", "negative-image-ready", "unknown-image-key",
         "image-entry-null", "image-key-not-string", "every-error-reported"],
)
def test_invalid_kubelet_block_reports_every_error_with_its_path(raw: object, messages: list[str]) -> None:
    profile, errors = parse_kubelet(raw)
    assert [str(e) for e in errors] == messages
    assert isinstance(profile, KubeletProfile)


def test_invalid_fields_fall_back_to_defaults_while_valid_ones_apply() -> None:
    profile, errors = parse_kubelet({"startSeconds": -1, "readySeconds": 4, "images": {"bad": {"fail": "X"},
                                                                                     "ok": {"ready": False}}})
    assert len(errors) == 2
    assert (profile.start_seconds, profile.ready_seconds) == (5.0, 4.0)
    assert set(profile.images) == {"ok"}


def test_path_prefix_is_used_in_errors() -> None:
    _, errors = parse_kubelet({"startSeconds": -1}, path="scenario.kubelet")
    assert errors[0].path == "scenario.kubelet.startSeconds"


@pytest.mark.parametrize(
    "kwargs",
    [{"start_seconds": -1.0}, {"crash_run_seconds": 0.0}, {"crash_backoff_seconds": 20.0,
                                                           "crash_backoff_max_seconds": 10.0}],
    ids=["negative-start", "zero-crash-run", "max-below-initial"],
)
def test_profile_rejects_constants_that_would_stall_the_timeline(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        KubeletProfile(**kwargs)


def test_image_behaviour_rejects_unknown_failure() -> None:
    with pytest.raises(ValueError):
        ImageBehaviour(fail="Boom")
