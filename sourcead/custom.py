"""Custom rules, as users and generated code import them: `sourcead.custom_rule`, and `jitable`
(generated code calls a custom-rule function through it). The registry lives with the other
primitive declarations, in `sourcead/rules/custom.py`."""

from .rules.custom import CustomRule, by_key, by_name, custom_rule, jitable, lookup

__all__ = ["CustomRule", "by_key", "by_name", "custom_rule", "jitable", "lookup"]
