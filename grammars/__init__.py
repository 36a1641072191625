"""lark grammars for the structured lines of a build log; loaded through buildlog.resources."""
