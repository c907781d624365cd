"""DDP008 on shapes seen in the ecosystem check: an object that reloads the state it saved itself,
under a file name its caller picks. Each is checked on what the rule must leave alone and on the
nearest case it must still flag. Written in our own words."""

from __future__ import annotations

# -- DDP008: an object that reloads the state it saved, under a file name its caller picks ------

_OWN_STATE = """
import torch
import torch.distributed as dist


class ShardedOptimizer:
    def state_shapes(self):
        shapes = [None] * dist.get_world_size()
        dist.all_gather_object(shapes, self.shapes)
        return shapes

    def save_to(self, filename):
        torch.save(self.state_dict(), filename)

    def load_from(self, filename):
        self.load_state_dict(torch.load(filename))
"""


def test_object_reloading_its_own_saved_state_from_a_caller_given_path_is_left_alone(lint):
    assert lint(_OWN_STATE, ["DDP008"]) == []


def test_load_from_a_caller_given_path_without_the_matching_save_still_flags(lint):
    other_state = _OWN_STATE.replace("torch.save(self.state_dict(), filename)", "torch.save(model.state_dict(), filename)")
    assert lint(other_state, ["DDP008"]) == [(15, "DDP008")]


def test_load_of_a_fixed_path_in_such_a_class_still_flags(lint):
    fixed = _OWN_STATE.replace("torch.load(filename)", 'torch.load("optimizer.pt")')
    assert lint(fixed, ["DDP008"]) == [(15, "DDP008")]
