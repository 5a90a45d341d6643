"""The admin page names every audit event schema and each of its fields, and every feature a
policy can switch off (issue 37): a field or feature added without its documentation fails."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jupyter_resolve.audit import SCHEMA_FILES
from jupyter_resolve.audit.logger import SCHEMAS_DIR
from jupyter_resolve.contracts.admin_policy import Features

PAGE = Path(__file__).resolve().parents[2] / "docs/hosting/admin-policy.md"


@pytest.mark.parametrize("schema_id", sorted(SCHEMA_FILES))
def test_every_audit_schema_and_field_is_documented(schema_id: str) -> None:
    text = PAGE.read_text()
    schema = yaml.safe_load((SCHEMAS_DIR / SCHEMA_FILES[schema_id]).read_text())
    assert schema["$id"] == schema_id
    section = text.split(f"### `{schema_id}`", 1)
    assert len(section) == 2, f"{schema_id} has no section in {PAGE.name}"
    body = section[1].split("\n### ", 1)[0]
    missing = [name for name in schema["properties"] if f"`{name}`" not in body]
    assert missing == [], f"{schema_id}: fields not documented: {missing}"


def test_every_feature_is_documented() -> None:
    text = PAGE.read_text()
    assert [f for f in Features.model_fields if f"`{f}:" not in text] == []
