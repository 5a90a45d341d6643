"""The provenance settings of ``Resolve`` (DESIGN 3.7: an artifact's RO-Crate names people).

A base class of :class:`~jupyter_resolve.config.Resolve`, so each is ``c.Resolve.NAME`` like
every other setting; kept apart, as the model and agent settings are.
"""

from __future__ import annotations

import re
from typing import Any

from traitlets import Dict, TraitError, Unicode, validate
from traitlets.config import Configurable

ORCID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")


class ProvenanceSettings(Configurable):
    """Who the exported provenance names, and under what terms (part of ``c.Resolve``)."""

    orcids = Dict(
        config=True,
        help="ORCID iDs of the people an artifact's RO-Crate names (who promoted it, started "
        "its run, accepted a cell): login or display name → iD, e.g. {'ada': "
        "'0000-0002-1825-0097'}. Someone not listed is named by display name only.",
    )
    crate_license = Unicode(
        "",
        config=True,
        help="The license an exported RO-Crate declares for its content: an SPDX URL such as "
        "'https://spdx.org/licenses/CC-BY-4.0' (empty: none declared).",
    )

    @validate("orcids")
    def _check_orcids(self, proposal: dict[str, Any]) -> dict[str, str]:
        value = proposal["value"]
        for who, orcid in value.items():
            bare = str(orcid).removeprefix("https://orcid.org/")
            if not isinstance(who, str) or not ORCID.match(bare):
                raise TraitError(
                    f"c.Resolve.orcids: {who!r} → {orcid!r} is not an ORCID iD "
                    "(0000-0000-0000-000X)"
                )
        return {who: str(orcid).removeprefix("https://orcid.org/") for who, orcid in value.items()}
