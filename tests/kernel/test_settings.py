"""The settings' environment readers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from nekomem.settings import env_choice

CLOCKS = ("database", "server")


def test_a_choice_is_read_whatever_its_case_and_spaces(monkeypatch):
    monkeypatch.setenv("NEKOMEM_TEST_CHOICE", " Server ")
    assert env_choice("NEKOMEM_TEST_CHOICE", CLOCKS, "database") == "server"


@pytest.mark.parametrize("value", [None, "", "  "])
def test_an_unset_or_empty_choice_is_the_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("NEKOMEM_TEST_CHOICE", raising=False)
    else:
        monkeypatch.setenv("NEKOMEM_TEST_CHOICE", value)
    assert env_choice("NEKOMEM_TEST_CHOICE", CLOCKS, "database") == "database"


def test_any_other_value_stops_the_start_naming_the_variable_and_the_choices(monkeypatch):
    monkeypatch.setenv("NEKOMEM_TEST_CHOICE", "python")
    with pytest.raises(ImproperlyConfigured) as raised:
        env_choice("NEKOMEM_TEST_CHOICE", CLOCKS, "database")
    assert str(raised.value) == "NEKOMEM_TEST_CHOICE='python': expected one of database, server"


def test_a_misspelt_raw_log_clock_stops_the_settings_from_loading(tmp_path):
    environment = {**os.environ, "NEKOMEM_VAR_DIR": str(tmp_path), "NEKOMEM_RAW_LOG_CLOCK": "db"}
    loaded = subprocess.run(
        [sys.executable, "-c", "import nekomem.settings"],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert loaded.returncode != 0
    assert "NEKOMEM_RAW_LOG_CLOCK='db': expected one of database, server" in loaded.stderr
