// Artifacts of models with dimensions known only at run time (kiln/runtime/shape_variants.h):
// `kiln compile` writes the folder, `kiln run` / `kiln bench` compile a missing variant the
// first time its input shapes are met.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "kiln/runtime/shape_variants.h"

namespace kiln::cli {

// True when an input of @main has a dimension unknown at compile time.
bool has_run_time_dims(const LoadedModel& model);
// Writes DIR as a variants folder for `model` (kept as IR text) and compiles a variant for
// each --variant "NAME=D0,D1,... [NAME=...]" given.
void write_shape_variants(const LoadedModel& model, const Args& args, const std::string& dir);
// The variant of `variants` for these input shapes, compiled into its folder when absent.
std::shared_ptr<const Artifact> variant_for(const ShapeVariants& variants, const std::vector<Shape>& shapes);

}  // namespace kiln::cli
