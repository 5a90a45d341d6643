"""The connection a kernel reads for %resolve (issue 39.2): either name form, the configured
URL for kernels, and an environment whose printed form shows its names only."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from jupyter_resolve.config import Resolve
from jupyter_resolve.kernel_env import EnvShownByName
from jupyter_resolve.magics.client import Connection


def test_a_gateway_kernel_reads_the_kernel_prefixed_names() -> None:
    env = {"KERNEL_RESOLVE_URL": "http://server:8888/lab", "KERNEL_RESOLVE_TOKEN": "t1"}
    assert Connection.from_env(env) == Connection("http://server:8888/lab/", "t1")


def test_the_jupyter_names_win_over_the_kernel_prefixed_ones() -> None:
    env = {
        "JUPYTER_RESOLVE_URL": "http://a:1/",
        "JUPYTER_RESOLVE_TOKEN": "t1",
        "KERNEL_RESOLVE_URL": "http://b:2/",
        "KERNEL_RESOLVE_TOKEN": "t2",
    }
    assert Connection.from_env(env) == Connection("http://a:1/", "t1")


def test_the_printed_environment_shows_names_only() -> None:
    env = EnvShownByName(
        {"KERNEL_RESOLVE_TOKEN": "s3cret", "JUPYTERHUB_API_TOKEN": "hub", "PATH": "/bin"}
    )
    for shown in (repr(env), str(env), f"{ {'env': env} }"):
        assert "s3cret" not in shown and "hub'" not in shown and "/bin" not in shown
        assert "<environment: JUPYTERHUB_API_TOKEN, KERNEL_RESOLVE_TOKEN, PATH>" in shown
    assert env["KERNEL_RESOLVE_TOKEN"] == "s3cret"  # the kernel still gets it


def test_kernel_url_is_an_http_url_ending_in_a_slash() -> None:
    assert Resolve(kernel_url="https://jupyter.example.org/user/a").kernel_url == (
        "https://jupyter.example.org/user/a/"
    )
    assert Resolve().kernel_url == ""
    with pytest.raises((TraitError, ValueError)):
        Resolve(kernel_url="jupyter.example.org")
