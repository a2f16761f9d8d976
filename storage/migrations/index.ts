/**
 * Forward-only migrations, applied in order at start. Imported statically (as text) so that a
 * compiled binary carries them. Never edit a migration that has shipped; add the next one.
 */
import core from './0001_core.sql' with { type: 'text' }
import directory from './0002_directory.sql' with { type: 'text' }
import credentials from './0003_credentials.sql' with { type: 'text' }
import model from './0004_model.sql' with { type: 'text' }
import queue from './0005_queue.sql' with { type: 'text' }
import sipuserNumbers from './0006_sipuser_numbers.sql' with { type: 'text' }
import borderrules from './0007_borderrules.sql' with { type: 'text' }
import installation from './0008_installation.sql' with { type: 'text' }
import journalDomainSeq from './0009_journal_domain_seq.sql' with { type: 'text' }
import svctasks from './0010_svctasks.sql' with { type: 'text' }
import svctaskRuns from './0011_svctask_runs.sql' with { type: 'text' }
import integrationPoints from './0012_integration_points.sql' with { type: 'text' }
import journalHorizons from './0015_journal_horizons.sql' with { type: 'text' }
import directoryEdges from './0016_directory_edges.sql' with { type: 'text' }
import journalChannelTokens from './0017_journal_channel_tokens.sql' with { type: 'text' }
import requestKeys from './0018_request_keys.sql' with { type: 'text' }
import modelGenerations from './0019_model_generations.sql' with { type: 'text' }
import modelGenerationSequence from './0020_model_generation_sequence.sql' with { type: 'text' }
import channelFileUsage from './0021_channel_file_usage.sql' with { type: 'text' }
import queueOpen from './0022_queue_open.sql' with { type: 'text' }
import borderPatternsTaskSites from './0023_border_patterns_task_sites.sql' with { type: 'text' }
import installationSecrets from './0024_installation_secrets.sql' with { type: 'text' }
import queueOpenIndexes from './0025_queue_open_indexes.sql' with { type: 'text' }

export const migrations: { id: string; sql: string }[] = [
  { id: '0001_core', sql: core },
  { id: '0002_directory', sql: directory },
  { id: '0003_credentials', sql: credentials },
  { id: '0004_model', sql: model },
  { id: '0005_queue', sql: queue },
  { id: '0006_sipuser_numbers', sql: sipuserNumbers },
  { id: '0007_borderrules', sql: borderrules },
  { id: '0008_installation', sql: installation },
  { id: '0009_journal_domain_seq', sql: journalDomainSeq },
  { id: '0010_svctasks', sql: svctasks },
  { id: '0011_svctask_runs', sql: svctaskRuns },
  { id: '0012_integration_points', sql: integrationPoints },
  { id: '0015_journal_horizons', sql: journalHorizons },
  { id: '0016_directory_edges', sql: directoryEdges },
  { id: '0017_journal_channel_tokens', sql: journalChannelTokens },
  { id: '0018_request_keys', sql: requestKeys },
  { id: '0019_model_generations', sql: modelGenerations },
  { id: '0020_model_generation_sequence', sql: modelGenerationSequence },
  { id: '0021_channel_file_usage', sql: channelFileUsage },
  { id: '0022_queue_open', sql: queueOpen },
  { id: '0023_border_patterns_task_sites', sql: borderPatternsTaskSites },
  { id: '0024_installation_secrets', sql: installationSecrets },
  { id: '0025_queue_open_indexes', sql: queueOpenIndexes },
]
