//! The official 1BRC samples, byte-exact, with every engine.

use brc::Engine;

use crate::{brc, samples};

#[test]
fn every_sample_gives_its_expected_output_by_default() {
    for sample in samples() {
        let expected = std::fs::read(sample.with_extension("out")).unwrap();
        brc()
            .arg(&sample)
            .assert()
            .success()
            .stdout(expected)
            .stderr("");
    }
}

#[test]
fn every_sample_gives_its_expected_output_with_every_engine_and_thread_count() {
    // Chunks of 1 and 100 bytes put chunk boundaries on and around every line
    // of the small samples; 4M is the default.
    let runs = [("1", "4M"), ("2", "1"), ("3", "100"), ("4", "4M")];
    for sample in samples() {
        let expected = std::fs::read(sample.with_extension("out")).unwrap();
        for engine in Engine::ALL {
            for (threads, chunk_size) in runs {
                brc()
                    .args(["--engine", engine.name()])
                    .args(["--threads", threads, "--chunk-size", chunk_size])
                    .arg(&sample)
                    .assert()
                    .success()
                    .stdout(expected.clone())
                    .stderr("");
            }
        }
    }
}
