#!/usr/bin/env python3
"""Validates a CycloneDX JSON SBOM against CycloneDX's published schema, with cyclonedx-python-lib's strict
validator (the schema files ship inside that package). Exit 0 valid; 1 invalid (the first error printed)."""
import sys

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

with open(sys.argv[1], encoding="utf-8") as handle:
    document = handle.read()
error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(document)
if error is not None:
    print(f"INVALID: {error}")
    sys.exit(1)
print("VALID: CycloneDX 1.6")
