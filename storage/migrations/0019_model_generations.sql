-- Each domain's model generation, moved on by every change to its classes in the change's own
-- transaction (triggers: every path that writes a class moves it). A record write reads it in its
-- transaction: the class definitions it validated against may be another process's old ones.
CREATE TABLE model_generations (
  domain TEXT PRIMARY KEY,
  gen INTEGER NOT NULL
);
CREATE TRIGGER classes_generation_insert AFTER INSERT ON classes BEGIN
  INSERT INTO model_generations (domain, gen) VALUES (NEW.domain, 1)
    ON CONFLICT (domain) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER classes_generation_update AFTER UPDATE ON classes BEGIN
  INSERT INTO model_generations (domain, gen) VALUES (NEW.domain, 1)
    ON CONFLICT (domain) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER classes_generation_delete AFTER DELETE ON classes BEGIN
  INSERT INTO model_generations (domain, gen) VALUES (OLD.domain, 1)
    ON CONFLICT (domain) DO UPDATE SET gen = gen + 1;
END;
