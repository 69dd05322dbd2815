"""The attention variants' registry (nmt.settings.attention_variants) is where the model.attention setting's values,
its help and the layer each variant builds (nmt.models.variants.LAYERS) come from."""

from nmt.models.variants import LAYERS
from nmt.settings import PARAMS_SCHEMA
from nmt.settings.attention_variants import VARIANTS
from nmt.settings.sections import ATTENTIONS


def test_the_setting_offers_exactly_the_registered_variants_and_its_help_names_each():
    attention = PARAMS_SCHEMA["properties"]["model"]["properties"]["attention"]
    assert ATTENTIONS == tuple(VARIANTS) and attention["enum"] == list(VARIANTS)
    assert attention["description"].split(" | ")[0] == "none"
    assert [part.split(" (")[0] for part in attention["description"].split(" | ")] == list(VARIANTS)


def test_every_variant_names_a_layer_the_models_build():
    assert {v.layer for v in VARIANTS.values()} - {None} <= set(LAYERS)
    assert [name for name, v in VARIANTS.items() if v.layer is None] == ["none"]
