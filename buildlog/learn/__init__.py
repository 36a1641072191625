"""Learning from past failures: features, the light classifier, and similarity for "seen before"."""
