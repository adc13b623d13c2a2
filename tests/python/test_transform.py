"""kiln.transform: passes by name, PassContext, Sequential."""


import kiln

BATCH_NORM = """
def @main(%x: Tensor[(1, 10), float32], %g: Tensor[(10), float32], %b: Tensor[(10), float32],
          %m: Tensor[(10), float32], %v: Tensor[(10), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v); %1 = %0.0; %2 = nn.dropout(%1); %2.0
}
"""

CONSTANTS = "def @main(%x: Tensor[(2), float32]) { %0 = add(1f, 2f); multiply(%x, %0) }"


def test_every_registered_pass_is_a_function():
    names = kiln.transform.list_passes()
    assert {"FoldConstant", "SimplifyInference", "FuseOps"} <= set(names)
    for name in names:
        assert callable(getattr(kiln.transform, name))
        assert getattr(kiln.transform, name)().name == name


def test_simplify_inference_removes_batch_norm():
    mod = kiln.ir.IRModule.from_text(BATCH_NORM)
    assert "nn.batch_norm" in str(mod)
    simplified = kiln.transform.SimplifyInference()(mod)
    assert "nn.batch_norm" not in str(simplified) and "nn.dropout" not in str(simplified)
    assert "rsqrt" in str(simplified) or "sqrt" in str(simplified)
    assert "nn.batch_norm" in str(mod)  # modules are values


def test_fold_constant_by_name():
    folded = kiln.transform.get_pass("FoldConstant")(kiln.ir.IRModule.from_text(CONSTANTS))
    assert "add(" not in str(folded) and "multiply(%x, 3f" in str(folded)


def test_sequential_under_a_pass_context():
    seq = kiln.transform.Sequential([kiln.transform.SimplifyInference(), kiln.transform.FoldConstant(),
                                     kiln.transform.FuseOps()])
    mod = kiln.ir.IRModule.from_text(BATCH_NORM)
    with kiln.transform.PassContext(opt_level=3):
        fused = seq(mod)
    assert "Primitive=1" in str(fused)
    with kiln.transform.PassContext(opt_level=3, disabled_pass=["FuseOps"]):
        unfused = seq(mod)
    assert "Primitive=1" not in str(unfused) and "nn.batch_norm" not in str(unfused)


def test_pass_options_from_keywords_and_config():
    mod = kiln.ir.IRModule.from_text(BATCH_NORM)
    simplified = kiln.transform.SimplifyInference()(mod)
    fused = str(kiln.transform.FuseOps()(simplified))
    one_per_op = str(kiln.transform.FuseOps(fuse=False)(simplified))
    with kiln.transform.PassContext(config={"relay.FuseOps.fuse": False}):
        from_config = str(kiln.transform.FuseOps()(simplified))
    assert one_per_op == from_config
    assert one_per_op.count("Primitive=1") > fused.count("Primitive=1")


def test_pass_context_nests_and_restores():
    assert kiln.transform.PassContext.entered() is None
    with kiln.transform.PassContext(opt_level=1) as outer:
        with kiln.transform.PassContext(opt_level=3, required_pass=["FoldConstant"]) as inner:
            assert kiln.transform.PassContext.current() is inner
        assert kiln.transform.PassContext.current() is outer
    assert kiln.transform.PassContext.entered() is None
