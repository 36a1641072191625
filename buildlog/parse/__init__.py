"""Parse: candidate lines into typed events, with the lark grammars in grammars/."""
