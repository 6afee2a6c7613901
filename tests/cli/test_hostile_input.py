"""Hostile and mistaken input through every command: exit 2 with the field path and the rule on stderr and nothing
on stdout, never a traceback, a hang or a silent acceptance (spec/simulate.md, exit codes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollwise.cli import main
from rollwise.cli.render import collapse_repeats, figure

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples"
ROLLING = (EXAMPLES / "rolling-update.yaml").read_text()
FILE_COMMANDS = ("validate", "simulate", "plan", "compare")

SET = """
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {{name: {name}{extra_meta}}}
    spec:
      replicas: {replicas}
      selector: {{matchLabels: {{app: web}}}}
      template:
        metadata: {{labels: {{app: web}}}}
        spec: {{containers: [{{name: app, image: "app:v1"}}]{extra_pod}}}{extra_spec}
"""


def _set(name: str = "web", replicas: object = 2, extra_meta: str = "", extra_pod: str = "",
         extra_spec: str = "") -> str:
    return SET.format(name=name, replicas=replicas, extra_meta=extra_meta, extra_pod=extra_pod, extra_spec=extra_spec)


def _scenario(objects: str = _set(), rest: str = "") -> str:
    return f"name: hostile\nobjects:{objects}{rest}"


def _deep_yaml() -> str:
    return "name: x\ndescription: " + "[" * 3000 + "]" * 3000 + "\n"


def _alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\nname: *a8\n"


# (case, file name, content (str or bytes), text stderr must contain)
INVALID = [
    ("binary", "b.yaml", b"\xff\xfe\x00b\x00a\x00d", "UTF-16"),
    ("latin-1", "l.yaml", "name: caf\xe9\n".encode("latin-1"), "not UTF-8"),
    ("nested thousands deep", "d.yaml", _deep_yaml(), "MAX_NESTING_DEPTH"),
    ("json nested thousands deep", "d.json", "[" * 5000 + "]" * 5000, "MAX_NESTING_DEPTH"),
    ("alias bomb", "a.yaml", _alias_bomb(), "YAML aliases are not accepted"),
    ("limitSeconds .nan", "n.yaml", "name: x\nlimitSeconds: .nan\nobjects: []\n", "limitSeconds"),
    ("after .nan", "n.yaml", _scenario(rest="\nsteps: [{after: .nan}]\n"), "steps[0].after"),
    ("json NaN", "n.json", '{"name": "x", "limitSeconds": NaN}', "must be finite"),
    ("json 1e999", "n.json", '{"name": "x", "limitSeconds": 1e999}', "must be finite"),
    ("limitSeconds beyond the maximum", "n.yaml", "name: x\nlimitSeconds: 1e12\n", "limitSeconds"),
    ("duplicate yaml key", "k.yaml", _scenario(_set(extra_spec="\n      replicas: 3")), "spec.replicas: Duplicate"),
    ("duplicate json key", "k.json", '{"name": "x", "name": "y"}', 'duplicate key "name"'),
    ("claim templates of the wrong type, then a patch step", "c.yaml",  # found by the command fuzzer
     _scenario(_set(extra_spec="\n      volumeClaimTemplates: true"),
               rest="\nsteps: [{patch: {kind: StatefulSet, name: web, merge: {spec: {replicas: 3}}}}]\n"),
     "objects[0].spec.volumeClaimTemplates: Invalid value: true: must be a list"),
    ("unknown manifest field", "u.yaml", _scenario(_set(extra_spec="\n      replicaz: 3")),
     "objects[0].spec.replicaz: Unsupported value"),
    ("unknown step field", "u.yaml", _scenario(rest="\nsteps: [{scale: {name: web, replica: 3}}]\n"),
     "steps[0].scale.replica: Unsupported value"),
    ("quantity that is not one", "q.yaml",
     _scenario(_set(extra_pod="").replace('image: "app:v1"}', 'image: "app:v1", resources: {requests: {cpu: lots}}}')),
     "resources.requests.cpu"),
    ("negative grace period", "g.yaml", _scenario(_set(extra_pod=", terminationGracePeriodSeconds: -5")),
     "terminationGracePeriodSeconds: Invalid value: -5"),
    ("expect completed of the wrong type", "e.yaml", _scenario(rest='\nexpect: {web: {completed: "yes"}}\n'),
     "expect.web.completed"),
    ("expect operator value of the wrong type", "e.yaml",
     _scenario(rest="\nexpect: {web: {rolloutSeconds: {le: fast}}}\n"), "expect.web.rolloutSeconds.le"),
    ("expect about a set the scenario never creates", "e.yaml",
     _scenario(rest="\nexpect: {wbe: {completed: true}}\n"), "expect.wbe: Not found"),
    ("a model bound to a set the scenario never creates", "e.yaml",
     _scenario(rest="\nkubelet: {apps: {etdc: {model: quorum}}}\n"), "kubelet.apps.etdc: Not found"),
    ("impossible quorum annotation", "a.yaml",
     _scenario(_set(extra_meta=', annotations: {rollwise.dev/max-unavailable-members: "0"}')),
     "rollwise.dev/max-unavailable-members"),
    ("gate off while its field is set", "g.yaml",
     _scenario(_set(extra_spec="\n      updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}"),
               rest="\nfeatureGates: {MaxUnavailableStatefulSet: false}\n"),
     "the MaxUnavailableStatefulSet feature gate is disabled"),
    ("gate off while its annotation is set", "g.yaml",
     _scenario(_set(extra_meta=", annotations: {rollwise.dev/update-policy: QuorumAware}",
                    extra_spec="\n      updateStrategy: {type: OnDelete}"),
               rest="\nfeatureGates: {QuorumAwareUpdatesWithOnDelete: false}\n"),
     "the QuorumAwareUpdatesWithOnDelete feature gate is disabled"),
    ("pod with a malformed spec", "p.yaml",
     _scenario("\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: 5}}"),
     "objects[0].spec.containers"),
    ("owner references that are not a list", "o.yaml",
     _scenario("\n  - {apiVersion: v1, kind: Pod, metadata: {name: p, ownerReferences: 5}, spec: {containers: "
               "[{name: a, image: x}]}}"), "objects[0].metadata.ownerReferences"),
    ("a lease holder that is not a string", "l.yaml",
     _scenario("\n  - {apiVersion: coordination.k8s.io/v1, kind: Lease, metadata: {name: l}, spec: "
               "{holderIdentity: 5}}"), "objects[0].spec.holderIdentity"),
    ("claim resources that are not a mapping", "c.yaml",
     _scenario("\n  - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}, spec: {resources: 5}}"),
     "objects[0].spec.resources"),
    ("a self-referencing merge patch", "s.yaml",
     _scenario(rest="\nsteps:\n  - patch: {kind: StatefulSet, name: web, merge: &m {spec: {template: *m}}}\n"),
     "YAML aliases are not accepted"),
    ("two objects with one key", "t.yaml", _scenario(_set() + _set()), "objects[1].metadata.name: Duplicate value"),
    ("an expectation naming a set of two namespaces by name alone", "t.yaml",
     _scenario(_set(extra_meta=", namespace: a") + _set(extra_meta=", namespace: b"),
               "\nexpect: {web: {completed: true}}\n"),
     'expect.web: Invalid value: "web": StatefulSets named web live in namespaces a, b: name one as a/web'),
    ("a quorum model bound to a name used in two namespaces", "t.yaml",
     _scenario(_set(extra_meta=", namespace: a") + _set(extra_meta=", namespace: b"),
               "\nkubelet: {apps: {web: {model: quorum}}}\n"), "a model binds to a set whose name is used in one"),
    ("an expectation naming a namespace without the set", "t.yaml",
     _scenario(_set(extra_meta=", namespace: a") + _set(extra_meta=", namespace: b"),
               "\nexpect: {c/web: {completed: true}}\n"), "expect.c/web: Not found"),
    ("a billion replicas", "r.yaml", _scenario(_set(replicas=1000000000)), "MAX_SIMULATED_REPLICAS"),
    ("replicas as a string", "r.yaml", _scenario(_set(replicas='"5"')), 'spec.replicas: Invalid value: "5": must be an '
                                                                         "integer"),
    ("a name that is a number", "n.yaml", "name: 5\nobjects: []\n", "name: Invalid value: 5: must be a non-empty "
                                                                     "string, not a number"),
    ("empty file", "e.yaml", "", "empty document"),
    ("a manifest given as a scenario", "m.yaml", "apiVersion: apps/v1\nmetadata: {name: x}\nspec: {}\n", "kind"),
]


@pytest.mark.parametrize("command", FILE_COMMANDS)
@pytest.mark.parametrize(("name", "content", "words"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_files_exit_2_with_the_path_and_nothing_on_stdout(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, name: str, content: str | bytes,
        words: str) -> None:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code = main([command, str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert words in err, err


def test_markup_in_a_scenario_name_is_printed_as_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text('name: "[bold]x[/bold] [/] a/b"\nobjects: []\n')
    for command in ("simulate", "compare"):
        assert main([command, str(path)]) == 0
        assert "[bold]x[/bold] [/] a/b" in capsys.readouterr().out


def test_a_patch_that_makes_a_pod_malformed_is_a_rejected_step(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(_scenario("\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: "
                              "[{name: a, image: x}]}}",
                              "\nsteps:\n  - patch: {kind: Pod, name: p, merge: {spec: {containers: 7}}}\n"
                              "  - patch: {kind: StatefulSet, name: web, merge: {spec: {template: 5}}}\n"))
    path.write_text(path.read_text().replace("objects:", "objects:" + _set(), 1))
    assert main(["simulate", str(path), "--json"]) == 0
    rejected = [e for e in json.loads(capsys.readouterr().out)["events"] if e["type"] == "StepRejected"]
    assert [(e["index"], e["reason"]) for e in rejected] == [(0, "Invalid"), (1, "Invalid")]
    assert "spec.containers" in rejected[0]["message"] and "spec.template" in rejected[1]["message"]


@pytest.mark.parametrize(("target", "words"), [
    ("{tmp}", "is a directory"),
    ("{tmp}/file.txt/x.png", "is not a directory"),
    ("{tmp}/x.gif", "supported: .png, .svg, .pdf"),
])
def test_plot_to_a_place_it_cannot_go_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str,
                                                words: str) -> None:
    (tmp_path / "file.txt").write_text("")
    for command in ("simulate", "compare"):
        code = main([command, str(EXAMPLES / "rolling-update.yaml"), "--plot", target.format(tmp=tmp_path)])
        out, err = capsys.readouterr()
        assert (code, out) == (2, "") and "--plot" in err and words in err, err


@pytest.mark.parametrize(("suffix", "magic"), [("svg", b"<?xml"), ("pdf", b"%PDF"), ("png", b"\x89PNG")])
def test_plot_is_written_in_the_format_its_extension_names(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           suffix: str, magic: bytes) -> None:
    out = tmp_path / f"t.{suffix}"
    small = tmp_path / "small.yaml"
    small.write_text(_scenario(rest="\nsteps: [{waitFor: {ready: web, timeout: 60}}]\n"))
    assert main(["simulate", str(small), "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(magic)


def test_demo_out_onto_an_existing_file_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine")
    assert main(["demo", "--out", str(taken)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--out" in err and "not a directory" in err
    assert taken.read_text() == "mine"


@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--strategy", "Sideways", "supported values"),
    ("--strategy", "RollingUpdate:partition=99999999999", "32-bit"),
    ("--strategy", "RollingUpdate:maxUnavailable=0", "maxUnavailable"),
    ("--strategy", "RollingUpdate:partition=\u00b2", "must be an integer"),
    ("--strategy", "Recreate:partition=1", "takes no options"),
    ("--feature-gates", "Nope=true", "--feature-gates"),
])
def test_a_bad_flag_is_blamed_on_the_flag(capsys: pytest.CaptureFixture[str], flag: str, value: str,
                                          words: str) -> None:
    assert main(["simulate", str(EXAMPLES / "rolling-update.yaml"), flag, value]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{flag}: invalid") and words in err, err


def test_a_flag_that_makes_a_valid_file_invalid_is_named_with_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / "rolling-update.yaml"), "--strategy", "RollingUpdate:maxUnavailable=2",
                 "--feature-gates", "MaxUnavailableStatefulSet=false"]) == 2
    err = capsys.readouterr().err
    assert "with --strategy RollingUpdate:maxUnavailable=2 --feature-gates MaxUnavailableStatefulSet=false" in err


@pytest.mark.parametrize(("argv", "flag"), [
    (["lab", "etcd", "--start-seconds", "nan"], "--start-seconds"),
    (["lab", "etcd", "--start-seconds", "-1"], "--start-seconds"),
    (["lab", "etcd", "--plot", "x.gif"], "--plot"),
])
def test_lab_flags_are_checked_before_any_etcd_starts(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                      flag: str) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{flag}: invalid"), err


@pytest.mark.parametrize("at", ["-5", "nan", "inf", "1e300"])
def test_plan_at_must_be_a_finite_time_in_range(capsys: pytest.CaptureFixture[str], at: str) -> None:
    assert main(["plan", str(EXAMPLES / "rolling-update.yaml"), "--at", at]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--at:" in err


def test_compare_honours_expect(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", str(EXAMPLES / "rolling-update.yaml"), "--strategies", "RollingUpdate,OnDelete"])
    out, err = capsys.readouterr()
    assert code == 1 and "expect failed:" in out
    assert "expect failed: OnDelete: web.completed" in err and "RollingUpdate:" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.startswith("rollwise ")


@pytest.mark.parametrize(("command", "options"), [
    ("simulate", ("FILE", "--json", "--strategy", "--feature-gates", "--events", "--plot", ".svg")),
    ("compare", ("FILE", "--strategies", "--json", "--plot", "--feature-gates")),
    ("plan", ("FILE", "--at", "--strategy", "--feature-gates", "--json")),
    ("demo", ("--out", "--no-plots")),
    ("validate", ("FILE", "StatefulSet", "Pod", "not checked")),
])
def test_every_command_help_lists_what_it_accepts(capsys: pytest.CaptureFixture[str], command: str,
                                                  options: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(o in text for o in options), [o for o in options if o not in text]


def test_figures_are_printed_plainly() -> None:
    assert [figure(v) for v in (2592000.0, 41.5, 0.125, None, 3, -0.0)] == ["2592000", "41.5", "0.125", "-", "3",
                                                                             "0"]


def test_repeated_lines_collapse_to_a_count() -> None:
    lines = [(1.0, "a"), (2.0, "b"), (3.0, "b"), (4.0, "b"), (5.0, "c")]
    assert collapse_repeats(lines) == [(1.0, "a"), (2.0, "b"), (4.0, "... repeated 2 more times, the last at t=4 s"),
                                       (5.0, "c")]


def test_a_crash_looping_run_says_why_it_goes_on_and_does_not_flood(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(_scenario(rest="\nkubelet: {images: {'app:v2': {fail: CrashLoopBackOff}}}\nsteps:\n"
                                   "  - waitFor: {ready: web, timeout: 100}\n"
                                   "  - patch: {kind: StatefulSet, name: web, merge: {spec: {template: {spec: "
                                   "{containers: [{name: app, image: 'app:v2'}]}}}}}\nlimitSeconds: 20000\n"))
    assert main(["simulate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("CrashLoopBackOff") <= 3
    assert "repeated" in out and "kept restarting in back-off" in out and "e+0" not in out


def test_quorum_tables_are_not_clipped_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(EXAMPLES / "etcd-member-down.yaml"), "--strategies", "RollingUpdate,QuorumAware"]) \
        in (0, 1)
    out = capsys.readouterr().out
    assert "leader moves" in out and "writes" in out and "…" not in out


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_zero_kubelet_timings_settle_with_hundreds_of_replicas(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               policy: str) -> None:
    path = tmp_path / "z.yaml"
    path.write_text(_scenario(_set(replicas=80, extra_spec=f"\n      podManagementPolicy: {policy}"),
                              "\nkubelet: {startSeconds: 0, readySeconds: 0, terminationSeconds: 0}\nsteps:\n"
                              "  - waitFor: {ready: web, timeout: 10}\n"
                              "  - patch: {kind: StatefulSet, name: web, merge: {spec: {template: {spec: "
                              "{containers: [{name: app, image: 'app:v2'}]}}}}}\n"
                              "  - waitFor: {rolloutComplete: web, timeout: 10}\n"))
    assert main(["simulate", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["summary"]["web"]["completed"] and result["summary"]["web"]["podDeletions"] == 80


def test_validate_reads_lists_and_names_the_kinds_it_does_not_check(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: apps/v1, kind: StatefulSet, "
                      "metadata: {name: a}, spec: {}}\n")
    assert main(["validate", str(listed)]) == 2
    assert "items[0].spec.selector: Required value" in capsys.readouterr().err
    others = tmp_path / "others.yaml"
    others.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -1}\n---\n"
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b}]}\n")
    assert main(["validate", str(others)]) == 0
    assert "not checked (rollwise does not create or read them): Deployment" in capsys.readouterr().out
    others.write_text(others.read_text().replace("name: p}", "name: BAD_POD}"))
    assert main(["validate", str(others)]) == 2
    assert "[1].metadata.name" in capsys.readouterr().err
