-- When a provider's status lookup first said "no record" for an attempt after its call could no
-- longer land. A provider may register a key late (only once it is asked about it, say), so one
-- "no record" is not proof: it counts only when a second lookup, at least the provider's grace
-- later, says the same.
ALTER TABLE attempts ADD COLUMN first_not_found_at timestamptz;
