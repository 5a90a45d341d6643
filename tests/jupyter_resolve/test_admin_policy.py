"""The administrator's policy (issue 37.3): the file's shape, the merge rule and what health
shows (contracts/admin_policy.py, pure), then the loader applying it to a real ``Resolve``:
where the file is found, entries refused one by one, and a later change undone."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from jupyter_resolve.admin_policy import (
    ENV_VAR,
    FILE_NAME,
    PolicyError,
    apply_policy,
    enforce_policy,
    find_policy,
    start_environment,
)
from jupyter_resolve.config import Resolve
from jupyter_resolve.contracts.admin_policy import (
    HIDDEN,
    AdminPolicy,
    looks_secret,
    parse_policy,
    plan_locks,
    shown_locks,
)

KNOWN = set(Resolve.class_trait_names(config=True))
LOG = logging.getLogger("test-admin-policy")


def policy(**body: Any) -> AdminPolicy:
    return parse_policy(json.dumps(body))


def test_settings_lock_and_unknown_names_are_left_out() -> None:
    plan = plan_locks(policy(settings={"max_rounds": 3, "no_such_setting": 1}), KNOWN, "p")
    assert plan.values == {"max_rounds": 3}
    assert plan.problems == ["p: settings.no_such_setting is not a c.Resolve setting; left out"]


def test_features_switch_off_and_win_over_settings() -> None:
    body = {
        "settings": {"peer_secrets": {"a": "s" * 20}, "allow_remote_images": True},
        "features": {"peer": False, "remote_images": False, "require_sandbox": True},
    }
    plan = plan_locks(policy(**body), KNOWN)
    assert plan.values["peer_secrets"] == {}
    assert plan.values["allow_remote_images"] is False
    assert plan.values["sandbox"] == "bwrap" and plan.values["scratch_kernels"] == "local"
    assert plan.features_off == {"peer", "remote_images"}
    assert len(plan.problems) == 2 and all("overruled by features" in p for p in plan.problems)
    assert "s" * 20 not in " ".join(plan.problems)


def test_a_feature_this_version_lacks_is_no_problem() -> None:
    plan = plan_locks(policy(features={"acp_agents": False}), {"max_rounds"})
    assert plan.values == {} and plan.problems == [] and plan.features_off == {"acp_agents"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("not json", "not a valid policy"),
        ('{"settings": [], "extra": 1}', "settings"),
        ('{"features": {"peer": "maybe"}}', "features.peer"),
        ('{"features": {"teleport": false}}', "features.teleport"),
    ],
)
def test_a_file_of_the_wrong_shape_is_one_clear_error(text: str, words: str) -> None:
    with pytest.raises(PolicyError, match="is not a valid policy") as info:
        parse_policy(text, "the policy file /etc/x.json")
    assert words in str(info.value) and "/etc/x.json" in str(info.value)


def test_health_shows_plain_values_and_hides_secrets() -> None:
    secret = "peer-secret-0123456789"
    shown = shown_locks(
        {
            "max_rounds": 4,
            "allowed_models": ["gpt-4o-mini"],
            "approval_policy": {"exec": "ask"},
            "api_key_env": "ORG_KEY",
            "peer_secrets": {"alpha": secret},
            "mcp_servers": {"files": {"command": ["x"], "env": {"TOKEN": "t"}}},
            "base_url": "https://user:pw@llm.example/v1",
            "model": f"model-{secret}",
            "allow_remote_images": False,
        }
    )
    assert shown["max_rounds"] == 4 and shown["allowed_models"] == ["gpt-4o-mini"]
    assert shown["approval_policy"] == {"exec": "ask"} and shown["api_key_env"] == "ORG_KEY"
    assert shown["peer_secrets"] == shown["mcp_servers"] == shown["base_url"] == HIDDEN
    assert shown["model"] == f"model-{HIDDEN}" and shown["allow_remote_images"] is False
    assert secret not in json.dumps(shown) and "pw@" not in json.dumps(shown)
    assert shown_locks({"peer_secrets": {}}) == {"peer_secrets": {}}


def test_secret_looking_names() -> None:
    assert looks_secret("peer_secrets") and looks_secret("hub_token") and looks_secret("api_key")
    assert not looks_secret("api_key_env") and not looks_secret("max_tokens")


def test_the_policy_wins_over_the_users_config_and_stays() -> None:
    user = Config({"Resolve": {"max_rounds": 20, "allow_remote_images": True}})
    config = Resolve(config=user)
    assert config.max_rounds == 20
    body = {"settings": {"max_rounds": 3}, "features": {"remote_images": False}}
    applied = apply_policy(config, policy(**body), "p.json")
    assert (config.max_rounds, config.allow_remote_images) == (3, False)
    assert applied.locked == {"max_rounds": 3, "allow_remote_images": False}
    from jupyter_resolve.admin_policy import keep_locked

    keep_locked(config, applied, LOG)
    config.max_rounds = 9  # code in the server
    config.update_config(Config({"Resolve": {"allow_remote_images": True}}))  # a reload
    assert (config.max_rounds, config.allow_remote_images) == (3, False)
    config.max_tokens = 100  # not locked: changes as ever
    assert config.max_tokens == 100


def test_a_refused_value_is_a_problem_and_the_rest_applies() -> None:
    config = Resolve(config=Config({"Resolve": {"max_rounds": 20}}))
    body = {"settings": {"max_rounds": 500, "max_tokens": 7, "peer_secrets": {"bad id!": "x"}}}
    applied = apply_policy(config, policy(**body), "p.json")
    assert applied.locked == {"max_tokens": 7}
    assert config.max_rounds == 20 and config.max_tokens == 7
    assert any("settings.max_rounds refused" in p and "64" in p for p in applied.problems)
    assert any(
        p.endswith("settings.peer_secrets refused (not a valid value); not locked")
        for p in applied.problems
    )


def test_where_the_file_is_found(tmp_path: Path) -> None:
    first, second = tmp_path / "env", tmp_path / "system"
    for folder in (first, second):
        folder.mkdir()
    assert find_policy({}, [str(first), str(second)]) is None
    (second / FILE_NAME).write_text("{}")
    assert find_policy({}, [str(first), str(second)]) == second / FILE_NAME
    (first / FILE_NAME).write_text("{}")
    assert find_policy({}, [str(first), str(second)]) == first / FILE_NAME
    named = tmp_path / "named.json"
    assert find_policy({ENV_VAR: str(named)}, [str(first)]) == named  # named: must exist


def test_enforce_reads_the_file_and_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"settings": {"max_rounds": 2}}))
    config = Resolve()
    assert enforce_policy(config, LOG, path).locked == {"max_rounds": 2}
    assert config.max_rounds == 2
    with pytest.raises(PolicyError, match="cannot be read"):
        enforce_policy(Resolve(), LOG, tmp_path / "missing.json")
    path.write_text("{")
    with pytest.raises(PolicyError, match="not a valid policy"):
        enforce_policy(Resolve(), LOG, path)


def test_the_start_environment_is_read_from_proc(tmp_path: Path) -> None:
    """Issue 44.6: the policy's location comes from the environment the process started with
    (/proc/self/environ on Linux), which a config file's os.environ[...] = ... does not change."""
    proc = tmp_path / "environ"
    proc.write_bytes(b"HOME=/home/a\0JUPYTER_RESOLVE_POLICY=/etc/p.json\0ODD\0")
    assert start_environment(proc) == {"HOME": "/home/a", ENV_VAR: "/etc/p.json"}
    assert start_environment(tmp_path / "missing") is os.environ  # elsewhere: os.environ
