-- What objective=goodput measured of a workload, kept across restarts:
-- its gradient noise accumulator and per config the samples/s and global
-- batch behind the raw and learning speed-ups (daemon/tuner_goodput.c).
-- JSON: {"noise":{"n","mean_g2","mean_s","m2_g2","m2_s","c_gs"},
--        "configs":[{"config","global_batch","sps_sum","n"}]}; NULL: none.
ALTER TABLE tuner_workloads ADD COLUMN goodput TEXT;
