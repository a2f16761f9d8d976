-- Model generations come from one sequence for the whole database, so a domain deleted and created
-- again with its id never meets a generation it had before (its row goes with the domain; counting
-- from 1 again, a process holding the old domain's classes took them for current).
CREATE TABLE model_generation_sequence (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n INTEGER NOT NULL
);
INSERT INTO model_generation_sequence (id, n) VALUES (1, coalesce((SELECT max(gen) FROM model_generations), 0));
DROP TRIGGER classes_generation_insert;
DROP TRIGGER classes_generation_update;
DROP TRIGGER classes_generation_delete;
CREATE TRIGGER classes_generation_insert AFTER INSERT ON classes BEGIN
  UPDATE model_generation_sequence SET n = n + 1;
  INSERT INTO model_generations (domain, gen) VALUES (NEW.domain, (SELECT n FROM model_generation_sequence))
    ON CONFLICT (domain) DO UPDATE SET gen = excluded.gen;
END;
CREATE TRIGGER classes_generation_update AFTER UPDATE ON classes BEGIN
  UPDATE model_generation_sequence SET n = n + 1;
  INSERT INTO model_generations (domain, gen) VALUES (NEW.domain, (SELECT n FROM model_generation_sequence))
    ON CONFLICT (domain) DO UPDATE SET gen = excluded.gen;
END;
CREATE TRIGGER classes_generation_delete AFTER DELETE ON classes BEGIN
  UPDATE model_generation_sequence SET n = n + 1;
  INSERT INTO model_generations (domain, gen) VALUES (OLD.domain, (SELECT n FROM model_generation_sequence))
    ON CONFLICT (domain) DO UPDATE SET gen = excluded.gen;
END;
