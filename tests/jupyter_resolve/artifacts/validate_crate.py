"""Run roc-validator on a crate folder, offline, against the Process Run Crate profile; print
its verdict and issues as JSON. A process of its own: the validator keeps a process-wide HTTP
requester (a singleton) and logging of its own."""

from __future__ import annotations

import json
import sys


def main(folder: str, cache: str, severity: str) -> None:
    from rocrate_validator import models, services

    settings = models.ValidationSettings(
        rocrate_uri=folder,
        profile_identifier="process-run-crate",
        requirement_severity=severity,
        offline=True,
        cache_path=cache,
    )
    result = services.validate(settings)
    issues = [
        {"severity": i.severity.name, "check": i.check.identifier, "message": i.message}
        for i in result.get_issues()
    ]
    print(json.dumps({"passed": result.passed(), "issues": issues}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
