"""The Kubernetes CEL libraries cel-cpp lacks, as kube-apiserver offers them to CRD rules and admission policies
(``k8s.io/apiserver/pkg/cel/library``): the list library (``isSorted``, ``sum``, ``min``, ``max``), the regex
library (``find``, ``findAll``), the predicates of the IP and CIDR libraries (``isIP``, ``isCIDR``) and the quantity
library (``quantity()``, ``isQuantity`` and a Quantity's comparisons and arithmetic: ``cel_quantity.py``). Not
offered: ``indexOf``/``lastIndexOf`` on lists (cel-cpp's strings extension declares those names for strings and
will not overload them) and the other value types (``ip()``, ``cidr()``, ``url()``): a rule using them does not
compile here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]

from rollwise.apiserver.admission.cel_quantity import quantity_functions

__all__ = ["kubernetes_functions"]


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _sum(items: Sequence[Any]) -> Any:
    return sum(items) if items else 0


def _min(items: Sequence[Any]) -> Any:
    if not items:
        raise ValueError("min(list) called on an empty list")
    return min(items)


def _max(items: Sequence[Any]) -> Any:
    if not items:
        raise ValueError("max(list) called on an empty list")
    return max(items)


def _find(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str) -> list[str]:
    return [m.group(0) for m in re.finditer(pattern, text)]


def _find_all_n(text: str, pattern: str, limit: int) -> list[str]:
    found = _find_all(text, pattern)
    return found if limit < 0 else found[:limit]


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return "%" not in text  # kube-apiserver refuses zones


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def kubernetes_functions() -> list[Any]:
    """The declarations to give ``cel.NewEnv(functions=...)``."""
    t = cel.Type
    dyn_list = t.List(t.DYN)
    string_list = t.List(t.STRING)

    def member(name: str, ret: Any, params: list[Any], impl: Any, suffix: str = "") -> Any:
        return cel.Overload(f"k8s_{name}{suffix}", ret, params, is_member=True, impl=impl)

    def func(name: str, ret: Any, params: list[Any], impl: Any) -> Any:
        return cel.Overload(f"k8s_{name}", ret, params, is_member=False, impl=impl)

    return [
        cel.FunctionDecl("isSorted", [member("isSorted", t.BOOL, [dyn_list], _is_sorted)]),
        cel.FunctionDecl("sum", [member("sum", t.DYN, [dyn_list], _sum)]),
        cel.FunctionDecl("min", [member("min", t.DYN, [dyn_list], _min)]),
        cel.FunctionDecl("max", [member("max", t.DYN, [dyn_list], _max)]),
        cel.FunctionDecl("find", [member("find", t.STRING, [t.STRING, t.STRING], _find)]),
        cel.FunctionDecl("findAll", [member("findAll", string_list, [t.STRING, t.STRING], _find_all),
                                     member("findAll", string_list, [t.STRING, t.STRING, t.INT], _find_all_n,
                                            "_n")]),
        cel.FunctionDecl("isIP", [func("isIP", t.BOOL, [t.STRING], _is_ip)]),
        cel.FunctionDecl("isCIDR", [func("isCIDR", t.BOOL, [t.STRING], _is_cidr)]),
        *quantity_functions(),
    ]
