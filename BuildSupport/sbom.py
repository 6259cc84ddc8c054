#!/usr/bin/env python3
"""Writes dist/SQLCipherKit/sbom.cdx.json, a CycloneDX 1.6 software bill of materials for SQLCipherKit's
artifacts: what each one contains (SQLCipher and its SQLite baseline, OpenSSL when folded in, the Swift runtime
and the CLI's package dependencies), what each one needs from the system (OpenSSL's libcrypto), and its SHA-256.
Per architecture: each archive names the target triple it is built for (sqlcipherkit:targetTriple, on the file
itself or on each file of a folder artifact), and OpenSSL is one component per architecture (its version and
Debian package for that architecture), each artifact depending on the ones it carries or needs. The Fluent driver's
source package (swiftpm/FluentSQLCipherDriver) depends on the release package and on the Swift packages it requires
and does not ship (sql-kit, fluent-kit, swift-log: scope "excluded", their lowest versions from the driver's
manifest); the observability bridge's (swiftpm/SQLCipherKitObservability) likewise on swift-log, swift-metrics and
swift-distributed-tracing (swift-log one component, naming both).

    sbom.py --out FILE --facts FACTS.json

FACTS.json (written by build-sqlcipher.sh with json_object.py) holds the facts the build knows; this tool only
arranges them into CycloneDX. The tests validate the result against CycloneDX's published JSON schema.
"""
import argparse
import hashlib
import json
import os
import uuid

from driver_package import pinned_versions
from observability_package import requirements as bridge_requirements

SPEC_VERSION = "1.6"


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def requirement_components(requirements, package, license_id, also_required_by=()):
    """The Swift packages a source package of dist/ requires and does not ship ({name: (url, lowest version)}), as
    components of scope "excluded"; `also_required_by`: the names another package of dist/ requires too (one
    component each: a bom-ref is unique), whose description names both."""
    components = []
    for name, (url, version) in sorted(requirements.items()):
        location = url.split("://", 1)[-1].removesuffix(".git")
        who = f"{package} and swiftpm/FluentSQLCipherDriver require" if name in also_required_by \
            else f"{package} requires"
        components.append({
            "bom-ref": f"swiftpm-requirement:{name}", "type": "library", "name": name, "version": version,
            "scope": "excluded", "licenses": [{"license": {"id": license_id}}],
            "description": f"a Swift package {who} (from: {version}); "
                           "resolved and built by the consumer, not shipped",
            "purl": f"pkg:swift/{location}@{version}",
        })
    return components


def local_changes(changes):
    """SQLCipherKit's local changes to the generated SQLite source (Vendor/sqlcipher.pin, PIN_LOCAL_CHANGES) as
    CycloneDX pedigree patches on the SQLite component, plus one property listing their names."""
    if not changes:
        return {}
    patches = [{
        "type": "unofficial",
        "diff": {"text": {"contentType": "text/x-diff", "content":
                          f"{change['function']}():\n-{change['match']}\n+{change['replace']}\n"}},
        "resolves": [{"type": "defect", "id": change["name"], "name": change["name"],
                      "description": change["reason"]}],
    } for change in changes]
    return {"pedigree": {"patches": patches, "notes": "SQLCipherKit's one-line local changes to the generated "
                         "amalgamation (Vendor/sqlcipher.pin, PIN_LOCAL_CHANGES)"},
            "properties": [{"name": "sqlcipherkit:localChanges",
                            "value": " ".join(change["name"] for change in changes)}]}


def target_triple_of(path, triple):
    """Whether the file at path is built for triple: it lies in a folder named after the triple."""
    return f"{os.sep}{triple}{os.sep}" in path


def file_component(path, dist, triples):
    """One file of a folder artifact, with its SHA-256 and, for an archive of one architecture, its triple."""
    relative = os.path.relpath(path, dist)
    component = {"bom-ref": f"artifact:{relative}", "type": "file", "name": relative,
                 "hashes": [{"alg": "SHA-256", "content": sha256(path)}]}
    for triple in triples:
        if target_triple_of(path, triple):
            component["properties"] = [{"name": "sqlcipherkit:targetTriple", "value": triple}]
    return component


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--facts", required=True)
    args = parser.parse_args()
    with open(args.facts, encoding="utf-8") as handle:
        facts = json.load(handle)

    sqlcipher = facts["sqlcipherVersion"]
    sqlite = facts["sqliteVersion"]
    openssl = facts["opensslVersion"]
    host_triple, arm64_triple = facts["hostTriple"], facts["arm64Triple"]
    openssl_arm64 = f"openssl:{arm64_triple}"
    components = [
        {
            "bom-ref": "sqlcipher", "type": "library", "name": "SQLCipher", "version": sqlcipher,
            "supplier": {"name": "Zetetic LLC"},
            "description": f"SQLCipher community edition {sqlcipher}, compiled into the engine archive",
            "licenses": [{"license": {"id": "BSD-3-Clause"}}],
            "hashes": [{"alg": "SHA-256", "content": facts["sourceSHA256"]}],
            "purl": f"pkg:github/sqlcipher/sqlcipher@v{sqlcipher}",
            "externalReferences": [{"type": "distribution", "url": url, "comment": "source tarball"}
                                   for url in facts["sourceURLs"]],
            "properties": [{"name": "sqlcipherkit:sourceTarball", "value": facts["sourceTarball"]},
                           {"name": "sqlcipherkit:compileFlags", "value": " ".join(facts["compileFlags"])},
                           {"name": "sqlcipherkit:cryptoProvider", "value": facts["cryptoProvider"]},
                           {"name": "sqlcipherkit:cryptoProviderDescription",
                            "value": facts["cryptoProviderDescription"]}],
        },
        {
            "bom-ref": "sqlite", "type": "library", "name": "SQLite", "version": sqlite,
            "description": f"SQLite {sqlite}, the baseline SQLCipher {sqlcipher} is built on (inside its tarball)",
            "licenses": [{"license": {"id": "blessing"}}],
            "purl": f"pkg:generic/sqlite@{sqlite}",
            **local_changes(facts.get("localChanges", [])),
        },
        {
            "bom-ref": "openssl", "type": "library", "name": "OpenSSL libcrypto", "version": openssl,
            "description": "the crypto provider: linked from the system by the archives, the CLI and the default "
                           "release package; folded into SQLCipherEngine.artifactbundle and the "
                           "openssl-inside release package",
            "licenses": [{"license": {"id": "Apache-2.0"}}],
            "purl": f"pkg:deb/debian/libssl3@{facts['opensslPackageVersion']}?arch={facts['hostDebianArch']}",
            "properties": [{"name": "sqlcipherkit:targetTriple", "value": host_triple}],
        },
        {
            "bom-ref": openssl_arm64, "type": "library", "name": "OpenSSL libcrypto (arm64)",
            "version": facts["opensslVersionArm64"],
            "description": f"the crypto provider of the {arm64_triple} engine (Debian's libssl-dev:arm64): linked "
                           "from the system by lib/" + arm64_triple + "/libsqlcipher.a and the default release "
                           "package's aarch64 variant; folded into the aarch64 variants of "
                           "SQLCipherEngine.artifactbundle and the openssl-inside release package",
            "licenses": [{"license": {"id": "Apache-2.0"}}],
            "purl": f"pkg:deb/debian/libssl3@{facts['opensslPackageVersionArm64']}?arch=arm64",
            "properties": [{"name": "sqlcipherkit:targetTriple", "value": arm64_triple}],
        },
        {
            "bom-ref": "swift-runtime", "type": "library", "name": "Swift runtime and Foundation",
            "version": facts["swiftVersion"],
            "description": f"statically linked into the CLI only ({facts['swiftVersionLine']}); ICU data included",
            "licenses": [{"license": {"id": "Apache-2.0"}}],
        },
        {
            "bom-ref": "swift-toolchain", "type": "application", "name": "Swift toolchain",
            "version": facts["swiftVersion"], "description": facts["swiftVersionLine"],
            "licenses": [{"license": {"id": "Apache-2.0"}}],
            "properties": [{"name": "sqlcipherkit:role", "value": "build tool"},
                           {"name": "sqlcipherkit:cCompiler", "value": facts["cCompiler"]}],
        },
    ]
    # The CLI's Swift package dependencies, as SwiftPM resolved them for this build.
    with open(facts["packageResolved"], encoding="utf-8") as handle:
        pins = json.load(handle)["pins"]
    for pin in pins:
        location = pin["location"].split("://", 1)[-1].removesuffix(".git")
        components.append({
            "bom-ref": f"swiftpm:{pin['identity']}", "type": "library", "name": pin["identity"],
            "version": pin["state"]["version"], "licenses": [{"license": {"id": "Apache-2.0"}}],
            "description": "a Swift package the CLI depends on (statically linked into bin/sqlcipherkit)",
            "purl": f"pkg:swift/{location}@{pin['state']['version']}",
        })

    # What the Fluent driver's package requires and does not ship: sql-kit, fluent-kit, swift-log, by URL and lowest
    # version (the consumer's SwiftPM resolves them; the versions are the ones the repository's driver manifest
    # names); and the observability bridge's (swift-log, swift-metrics, swift-distributed-tracing), from its manifest.
    # A package both require (swift-log) is one component (a bom-ref is unique), the bridge's, naming both.
    driver_requirements = pinned_versions(facts["root"])
    observability_requirements = bridge_requirements(facts["root"])
    shared = sorted(driver_requirements.keys() & observability_requirements.keys())
    for name in shared:
        if driver_requirements[name] != observability_requirements[name]:
            raise SystemExit(f"sbom.py: the driver's manifest requires {name} {driver_requirements[name]}, the "
                             f"bridge's {observability_requirements[name]}: name the same URL and version in both")
    components += requirement_components({name: requirement for name, requirement in driver_requirements.items()
                                          if name not in shared}, "swiftpm/FluentSQLCipherDriver", "MIT")
    components += requirement_components(observability_requirements, "swiftpm/SQLCipherKitObservability",
                                         "Apache-2.0", also_required_by=shared)

    # The artifacts of dist/SQLCipherKit/: what each contains (bom-refs) and what OpenSSL it carries or needs.
    system, folded = facts["opensslSystemNote"], facts["opensslFoldedNote"]
    core = ["sqlcipherkit", "sqlcipher", "sqlite"]
    both = ["openssl", openssl_arm64]
    artifacts = [
        {"path": "lib/libSQLCipherKit.a", "description": "the Swift API and the engine, one archive",
         "contains": core, "openssl": system, "needs": ["openssl"]},
        {"path": "lib/libsqlcipher.a", "description": "the engine alone (C API) with SQLCipherKit's crypto glue",
         "contains": core, "openssl": system, "needs": ["openssl"]},
        {"path": f"lib/{arm64_triple}/libsqlcipher.a",
         "description": f"the engine alone (C API) with SQLCipherKit's crypto glue, for {arm64_triple}",
         "contains": core, "openssl": system, "needs": [openssl_arm64]},
        {"path": "bin/sqlcipherkit", "type": "application", "description": "the command-line tool",
         "contains": core + ["swift-runtime"] + [f"swiftpm:{pin['identity']}" for pin in pins], "openssl": system,
         "needs": ["openssl"]},
        {"path": "SQLCipherEngine.artifactbundle", "description": "SE-0482 bundle: the engine's C API, self-contained",
         "contains": core + both, "openssl": folded},
        {"path": "swiftpm/SQLCipherKit", "description": "release package (SwiftPM), linking the system libcrypto",
         "contains": core, "openssl": system, "needs": both},
        {"path": "swiftpm/SQLCipherKit-openssl-inside", "description": "release package (SwiftPM), libcrypto folded in",
         "contains": core + both, "openssl": folded},
        {"path": "swiftpm/FluentSQLCipherDriver",
         "description": "source package (SwiftPM): SQLKit and FluentKit on SQLCipherKit; builds against the release "
                        "package and the Swift packages it requires, none of which it ships",
         "contains": ["sqlcipherkit"], "openssl": system,
         "needs": ["artifact:swiftpm/SQLCipherKit"] + [f"swiftpm-requirement:{name}" for name in driver_requirements]},
        {"path": "swiftpm/SQLCipherKitObservability",
         "description": "source package (SwiftPM): SQLCipherKit's observer to swift-log, swift-metrics and "
                        "swift-distributed-tracing; builds against the release package and the Swift packages it "
                        "requires, none of which it ships",
         "contains": ["sqlcipherkit"], "openssl": system,
         "needs": ["artifact:swiftpm/SQLCipherKit"]
                  + [f"swiftpm-requirement:{name}" for name in observability_requirements]},
    ]
    dependencies = []
    for artifact in artifacts:
        path = os.path.join(facts["dist"], artifact["path"])
        files = [path] if os.path.isfile(path) else sorted(
            os.path.join(directory, name) for directory, _, names in os.walk(path) for name in names)
        if not files:
            raise SystemExit(f"sbom.py: artifact {artifact['path']} is missing")
        component = {
            "bom-ref": f"artifact:{artifact['path']}", "type": artifact.get("type", "library"),
            "name": artifact["path"], "version": sqlcipher, "description": artifact["description"],
            "properties": [{"name": "sqlcipherkit:openssl", "value": artifact["openssl"]}],
        }
        triples = sorted({t for f in files for t in (host_triple, arm64_triple) if target_triple_of(f, t)})
        if len(files) == 1:
            component["hashes"] = [{"alg": "SHA-256", "content": sha256(files[0])}]
            component["properties"].append({"name": "sqlcipherkit:targetTriple",
                                            "value": triples[0] if triples else host_triple})
        else:
            component["components"] = [file_component(f, facts["dist"], (host_triple, arm64_triple)) for f in files]
            component["properties"].append({"name": "sqlcipherkit:targetTriples", "value": " ".join(triples)})
        components.append(component)
        dependencies.append({"ref": component["bom-ref"],
                             "dependsOn": artifact["contains"] + artifact.get("needs", [])})

    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        # A stable serial number per artifact set: the same artifacts give the same SBOM.
        "serialNumber": "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, "sqlcipherkit:" + ":".join(
            c["hashes"][0]["content"] for c in components if c["bom-ref"].startswith("artifact:") and "hashes" in c))),
        "version": 1,
        "metadata": {
            "tools": {"components": [{"type": "application", "name": "SQLCipherKit build-sqlcipher.sh"}]},
            "component": {"bom-ref": "sqlcipherkit", "type": "library", "name": "SQLCipherKit",
                          "version": facts["projectVersion"], "licenses": [{"license": {"id": "MIT"}}]},
        },
        "components": components,
        "dependencies": dependencies + [{"ref": "sqlcipher", "dependsOn": ["sqlite", "openssl"]}],
    }
    partial = args.out + ".part"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(bom, handle, indent=2)
        handle.write("\n")
    os.replace(partial, args.out)


if __name__ == "__main__":
    main()
