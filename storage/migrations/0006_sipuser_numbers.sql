-- LOOKUP on SIP accounts compares the key with phonenumber too: without an index it read the whole domain.
CREATE INDEX sipusers_phonenumber ON sipusers (domain, phonenumber);
