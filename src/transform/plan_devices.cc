// PlanDevices: the device of every value of a function after RewriteAnnotatedOps (and
// FuseOps), for the backend to place each graph entry. Devices are found by unification,
// as Relay's PlanDevices does: an op call, a call of a fused function, a tuple and a
// projection are on the device of their arguments; a device_copy (an op call, or a fused
// function that is one) puts its argument on src_device and its result on dst_device; what
// no copy constrains is on the fallback device.
#include <unordered_map>
#include <vector>

#include "kiln/attrs/control.h"
#include "kiln/ir/op.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln {
namespace {

class DeviceUnifier {
 public:
  void add(const ExprNode* e) {
    if (index_.emplace(e, parent_.size()).second) {
      parent_.push_back(parent_.size());
      pinned_.emplace_back();
    }
  }

  void unite(const ExprNode* a, const ExprNode* b) {
    size_t ra = root(a), rb = root(b);
    if (ra == rb) return;
    if (!pinned_[rb].empty()) pin_root(ra, pinned_[rb]);
    parent_[rb] = ra;
  }

  void pin(const ExprNode* e, const std::string& device) { pin_root(root(e), device); }

  const std::string& device(const ExprNode* e, const std::string& fallback) {
    const std::string& d = pinned_[root(e)];
    return d.empty() ? fallback : d;
  }

 private:
  size_t root(const ExprNode* e) {
    size_t i = index_.at(e);
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }

  void pin_root(size_t r, const std::string& device) {
    if (!pinned_[r].empty() && pinned_[r] != device)
      throw std::move(Error("device planning: a value is needed on two devices without a device_copy between them")
                          .expected(pinned_[r], device));
    pinned_[r] = device;
  }

  std::unordered_map<const ExprNode*, size_t> index_;
  std::vector<size_t> parent_;
  std::vector<std::string> pinned_;
};

// The copy a call makes: device_copy itself, or a fused function whose body is one.
const CallNode* device_copy_of(const CallNode& call) {
  if (call.op()) return call.op()->name == "device_copy" ? &call : nullptr;
  const auto* fn = as<FunctionNode>(call.callee);
  if (!fn || !fn->is_primitive()) return nullptr;
  const auto* body = as<CallNode>(fn->body);
  return body && body->op() && body->op()->name == "device_copy" ? body : nullptr;
}

bool holds_values(const Expr& e) { return !as<OpNode>(e) && !as<FunctionNode>(e) && !as<GlobalVarNode>(e); }

}  // namespace

DeviceMap plan_devices(const FunctionNode& fn, const std::string& fallback_device) {
  const std::string fallback = canonical_device_name(fallback_device);
  DeviceUnifier unifier;
  std::vector<Expr> nodes;
  for (const Var& p : fn.params) unifier.add(p.get());
  post_order_visit(
      fn.body,
      [&](const Expr& e) {
        if (!holds_values(e)) return;
        unifier.add(e.get());
        nodes.push_back(e);
        if (const auto* call = as<CallNode>(e)) {
          if (const CallNode* copy = device_copy_of(*call)) {
            const DeviceCopyAttrs attrs = attrs_from<DeviceCopyAttrs>(copy->attrs, "device_copy");
            unifier.pin(e.get(), canonical_device_name(attrs.dst_device));
            for (const Expr& a : call->args) unifier.pin(a.get(), canonical_device_name(attrs.src_device));
            return;
          }
        }
        for (const Expr& child : children(e))
          if (holds_values(child)) unifier.unite(e.get(), child.get());
      },
      /*enter_functions=*/false);
  DeviceMap devices;
  for (const Var& p : fn.params) devices[p.get()] = unifier.device(p.get(), fallback);
  for (const Expr& e : nodes) devices[e.get()] = unifier.device(e.get(), fallback);
  return devices;
}

}  // namespace kiln
