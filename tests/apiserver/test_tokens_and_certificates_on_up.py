"""Who a request is on ``rollwise up --authz rbac`` beyond up's own token, as on a cluster: a bound service-account
token from ``kubectl create token`` (TokenRequest), and a client certificate signed by up's CA (its common name the
user, its organizations the groups), each then authorized through RBAC like any user. Driven with the real kubectl,
lightkube and the official Python client."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubectl_support import Up
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException
from lightkube import ApiError, Client, KubeConfig
from lightkube.resources.core_v1 import Pod

from rollwise.apiserver.auth.tls import load_or_create, sign_client_certificate

READER = """apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
  - {kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}
  - {kind: ServiceAccount, name: default, namespace: default}
"""


pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up("--authz", "rbac", "--data-dir", "{tmp}/data", shared=True, setup=lambda up: up.apply(READER)),
]


def _kubeconfig(up: Up, path: Path, **user: str) -> Path:
    """up's kubeconfig with another user: a token, or certificate and key data."""
    config = yaml.safe_load(up.kubeconfig.read_text())
    config["users"][0]["user"] = user
    path.write_text(yaml.safe_dump(config))
    return path


def _as(up: Up, kubeconfig: Path, *args: str) -> Any:
    return up.kubectl("--kubeconfig", str(kubeconfig), *args, check=False)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _whoami(up: Up, kubeconfig: Path) -> tuple[str, list[str]]:
    done = _as(up, kubeconfig, "auth", "whoami", "-o", "json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)["status"]["userInfo"]
    return info["username"], info["groups"]


def test_kubectl_create_token_gives_a_token_that_authenticates_as_the_service_account(up: Up, tmp_path: Path) -> None:
    token = up.kubectl("create", "token", "default").stdout.strip()
    as_sa = _kubeconfig(up, tmp_path / "sa", token=token)
    assert _whoami(up, as_sa) == ("system:serviceaccount:default:default",
                                  ["system:authenticated", "system:serviceaccounts", "system:serviceaccounts:default"])
    assert _as(up, as_sa, "get", "pods").returncode == 0  # the RoleBinding names the account
    refused = _as(up, as_sa, "get", "nodes")
    assert refused.returncode == 1 and 'User "system:serviceaccount:default:default" cannot list resource "nodes"' \
        in refused.stderr

    core = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=str(as_sa)))
    assert core.list_namespaced_pod("default").items == []
    with pytest.raises(ApiException) as err:
        core.list_namespace()
    assert err.value.status == 403


def test_a_token_for_another_audience_or_too_short_is_not_one_the_api_accepts(up: Up, tmp_path: Path) -> None:
    other = up.kubectl("create", "token", "default", "--audience", "vault").stdout.strip()
    assert "Unauthorized" in _as(up, _kubeconfig(up, tmp_path / "vault", token=other), "get", "pods").stderr
    assert "Unauthorized" in _as(up, _kubeconfig(up, tmp_path / "junk", token="a.b.c"), "get", "pods").stderr
    short = up.kubectl("create", "token", "default", "--duration", "5m", check=False)
    assert short.returncode == 1
    assert "spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes" \
        in short.stderr
    missing = up.kubectl("create", "token", "nobody", check=False)
    assert missing.returncode == 1 and 'serviceaccounts "nobody" not found' in missing.stderr


def test_a_token_bound_to_a_pod_stops_authenticating_once_the_pod_is_gone(up: Up, tmp_path: Path) -> None:
    up.apply('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "holder"},'
             ' "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}')
    token = up.kubectl("create", "token", "default", "--bound-object-kind", "Pod", "--bound-object-name",
                       "holder").stdout.strip()
    bound = _kubeconfig(up, tmp_path / "bound", token=token)
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["kubernetes.io"]["pod"]["name"] == "holder" and claims["sub"].endswith(":default:default")
    assert _as(up, bound, "get", "pods").returncode == 0
    up.kubectl("delete", "pod", "holder", "--grace-period=0", "--force")
    assert "Unauthorized" in _as(up, bound, "get", "pods").stderr


def test_a_client_certificate_signed_by_up_s_ca_is_its_common_name_in_its_organizations(up: Up,
                                                                                        tmp_path: Path) -> None:
    creds = load_or_create(up.kubeconfig.parent / "data" / "pki")
    cert, key = sign_client_certificate(creds, "alice", ("devs", "qa"))
    alice = _kubeconfig(up, tmp_path / "alice", **{"client-certificate-data": _b64(cert),
                                                   "client-key-data": _b64(key)})
    assert _whoami(up, alice) == ("alice", ["devs", "qa", "system:authenticated"])
    assert _as(up, alice, "get", "pods").returncode == 0  # the group devs may read pods
    refused = _as(up, alice, "delete", "pod", "x")
    assert refused.returncode == 1 and 'User "alice" cannot delete resource "pods"' in refused.stderr

    lightkube = Client(KubeConfig.from_file(alice), trust_env=False)
    assert list(lightkube.list(Pod, namespace="default")) is not None
    with pytest.raises(ApiError) as err:
        lightkube.create(Pod.from_dict({"metadata": {"name": "nope"},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
                         namespace="default")
    assert err.value.status.code == 403


def test_up_s_kubeconfig_user_carries_an_admin_certificate_as_kind_writes_one(up: Up, tmp_path: Path) -> None:
    user = yaml.safe_load(up.kubeconfig.read_text())["users"][0]["user"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "kubernetes-admin"
    assert cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    admin = _kubeconfig(up, tmp_path / "admin", **{k: v for k, v in user.items() if k != "token"})
    assert _whoami(up, admin) == ("kubernetes-admin", ["system:authenticated", "system:masters"])
    assert _as(up, admin, "get", "nodes").returncode == 0


def test_a_certificate_from_another_ca_is_refused(up: Up, tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "mallory")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    forged = _kubeconfig(up, tmp_path / "forged", **{
        "client-certificate-data": _b64(cert.public_bytes(serialization.Encoding.PEM)),
        "client-key-data": _b64(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))})
    done = _as(up, forged, "get", "pods")
    assert done.returncode == 1 and done.stdout == ""
