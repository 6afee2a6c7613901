import rollwise


def test_top_level_exports_exactly_the_library_surface() -> None:
    assert sorted(rollwise.__all__) == ["Plan", "SetView", "load_scenario", "reconcile", "run_scenario"]
    for name in rollwise.__all__:
        assert getattr(rollwise, name) is not None
