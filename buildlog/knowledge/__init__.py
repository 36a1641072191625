"""Knowledge kept as data: cause ids, rules, fact patterns and compatibility tables."""
