"""`rollwise up --kube-version/--feature-gates/--proposals`, driven by the real kubectl: the seeds' proposals on
apps/v1 are kept with a warning kubectl prints, or refused and dropped as that release's API server does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import zygote
from kubectl_support import Up, running_up

pytestmark = pytest.mark.kubectl


def _set(name: str, strategy: str) -> str:
    return f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: {name}}}
spec:
  replicas: 1
  updateStrategy: {strategy}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: app, image: "nginx:1.26"}}]}}
"""


def _strategy(up: Up, name: str) -> dict[str, object]:
    out = up.kubectl("get", "sts", name, "-o", "json").stdout
    return dict(json.loads(out)["spec"]["updateStrategy"])


@pytest.fixture(scope="module")
def default_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with running_up(tmp_path_factory.mktemp("default")) as up:
        yield up


@pytest.fixture(scope="module")
def up_136_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with running_up(tmp_path_factory.mktemp("off"), "--kube-version", "1.36", "--proposals", "off") as up:
        yield up


def test_a_proposal_on_apps_v1_is_kept_and_kubectl_prints_the_warning_naming_the_release(default_up: Up) -> None:
    created = default_up.kubectl("apply", "-f", "-", stdin=_set("rec", "{type: Recreate}"))
    scaled = _set("rec", "{type: Recreate}").replace("replicas: 1", "replicas: 2")
    again = default_up.kubectl("apply", "-f", "-", stdin=scaled)
    assert "created" in created.stdout
    for stderr in (created.stderr, again.stderr):
        assert ("Warning: spec.updateStrategy.type: a Kubernetes 1.37.0 API server refuses it (422): alpha behind "
                "the StatefulSetRecreateStrategy feature gate, off") in stderr
        assert "on a cluster, use apps.rollwise.dev/v1alpha1 StatefulSet" in stderr
    assert _strategy(default_up, "rec")["type"] == "Recreate"


def test_fields_no_release_has_are_kept_with_a_warning_each(default_up: Up) -> None:
    result = default_up.kubectl("apply", "-f", "-", stdin=_set(
        "ppt", "{type: RollingUpdate, rollingUpdate: {podProgressTimeoutSeconds: 60}}").replace(
        "  replicas: 1\n", "  replicas: 1\n  progressDeadlineSeconds: 300\n"))
    assert ("Warning: spec.progressDeadlineSeconds: a Kubernetes 1.37.0 API server does not know the field"
            in result.stderr)
    assert "Warning: spec.updateStrategy.rollingUpdate.podProgressTimeoutSeconds: a Kubernetes 1.37.0" in result.stderr
    assert json.loads(default_up.kubectl("get", "sts", "ppt", "-o", "json").stdout)["spec"]["updateStrategy"][
        "rollingUpdate"]["podProgressTimeoutSeconds"] == 60


def test_max_unavailable_on_1_37_is_no_proposal_and_gets_no_warning(default_up: Up) -> None:
    result = default_up.kubectl("apply", "-f", "-", stdin=_set("mu", "{rollingUpdate: {maxUnavailable: 2}}"))
    assert "Warning" not in result.stderr
    assert default_up.kubectl("version", "-o", "json").stdout.count('"gitVersion": "v1.37.0-rollwise"') == 1


def test_1_36_with_proposals_off_drops_max_unavailable_on_create_as_its_disabled_gate_does(up_136_off: Up) -> None:
    result = up_136_off.kubectl("apply", "-f", "-", stdin=_set("mu", "{rollingUpdate: {maxUnavailable: 2}}"))
    assert "Warning" not in result.stderr
    assert "maxUnavailable" not in json.dumps(_strategy(up_136_off, "mu"))


def test_1_36_with_proposals_off_answers_422_for_recreate_and_names_the_supported_values(up_136_off: Up) -> None:
    result = up_136_off.kubectl("apply", "-f", "-", stdin=_set("rec", "{type: Recreate}"), check=False)
    assert result.returncode != 0 and result.stdout == ""
    assert ('spec.updateStrategy.type: Unsupported value: "Recreate": supported values: "RollingUpdate", '
            '"OnDelete"') in result.stderr
    enforced = up_136_off.kubectl("apply", "-f", "-", stdin=_set("enf", "{type: EnforcedRollingUpdate}"), check=False)
    assert enforced.returncode != 0 and '"EnforcedRollingUpdate"' in enforced.stderr


def test_1_36_with_proposals_off_refuses_a_field_no_release_has_as_an_unknown_field(up_136_off: Up) -> None:
    result = up_136_off.kubectl("apply", "-f", "-", check=False, stdin=_set(
        "ppt", "{rollingUpdate: {podProgressTimeoutSeconds: 60}}"))
    assert result.returncode != 0
    assert 'unknown field "spec.updateStrategy.rollingUpdate.podProgressTimeoutSeconds"' in result.stderr
    lenient = up_136_off.kubectl("apply", "--validate=false", "-f", "-", stdin=_set(
        "ppt", "{rollingUpdate: {podProgressTimeoutSeconds: 60}}"))
    assert "created" in lenient.stdout
    assert "podProgressTimeoutSeconds" not in json.dumps(_strategy(up_136_off, "ppt"))


def test_the_recreate_gate_turned_on_in_1_37_takes_recreate_without_a_warning(tmp_path: Path) -> None:
    with running_up(tmp_path, "--feature-gates", "StatefulSetRecreateStrategy=true", "--proposals", "off") as up:
        result = up.kubectl("apply", "-f", "-", stdin=_set("rec", "{type: Recreate}"))
        assert "Warning" not in result.stderr and _strategy(up, "rec")["type"] == "Recreate"


@pytest.mark.parametrize(("flags", "words"), [
    (["--kube-version", "1.36", "--feature-gates", "StatefulSetRecreateStrategy=true"],
     "unrecognized feature gate: Kubernetes 1.36.0 knows MaxUnavailableStatefulSet"),
    (["--kube-version", "1.29"], "rollwise models releases 1.31 to 1.37"),
    (["--kube-version", "one.two"], "must be MAJOR.MINOR"),
    (["--feature-gates", "MaxUnavailableStatefulSet=maybe"], "must be Name=true or Name=false"),
], ids=["gate-the-release-lacks", "release-too-old", "not-a-version", "not-a-boolean"])
def test_bad_version_flags_are_one_line_each_and_exit_2(flags: list[str], words: str) -> None:
    result = zygote.run(["up", "--ephemeral", "--port", "0", *flags], timeout=60)
    assert result.returncode == 2 and result.stdout == "" and words in result.stderr
