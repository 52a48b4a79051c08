// A Nextflow process that folds one protein with cpufold in place of nf-core/proteinfold's
// COLABFOLD_BATCH: the same inputs and the same emitted file patterns (raw/**, ID_colabfold.pdb,
// raw/*relaxed_rank_*.pdb, ID_colabfold_msa.tsv, ID_plddt_mqc.tsv, ID_*_pae.tsv, ID_ptm.tsv),
// so the pipeline's later steps read it unchanged. Memory comes from cpufold's plan: the
// process asks for the planned peak plus 15% and retries with more on exit 4 or 137-140.
//
// Nextflow is not packaged in Debian; install it from https://www.nextflow.io and include this
// file, e.g.:  include { CPUFOLD_COLABFOLD } from './cpufold_colabfold.nf'
// params.cpufold (default 'cpufold'), params.cpufold_scripts (this directory: the process runs
// its cpufold_colabfold.sh) and task.ext.args (extra predict options) configure it.

process CPUFOLD_COLABFOLD {
    tag "$meta.id"
    cpus 4
    memory { cpufold_plan_memory(fasta, params_dir) * task.attempt }
    errorStrategy { task.exitStatus in [4, 137, 138, 139, 140] ? 'retry' : 'finish' }
    maxRetries 2

    input:
    tuple val(meta), path(fasta), path(params_dir)
    val   numRec

    output:
    path ("raw/**")                                         , emit: raw
    tuple val(meta), path ("${meta.id}_colabfold.pdb")      , emit: top_ranked_pdb
    tuple val(meta), path ("raw/*relaxed_rank_*.pdb")       , emit: pdb
    tuple val(meta), path ("${meta.id}_colabfold_msa.tsv")  , emit: msa
    tuple val(meta), path ("${meta.id}_plddt_mqc.tsv")      , emit: multiqc
    tuple val(meta), path ("${meta.id}_*_pae.tsv")          , optional: true, emit: paes
    tuple val(meta), path ("${meta.id}_0_pae.tsv")          , optional: true, emit: pae
    tuple val(meta), path ("${meta.id}_ptm.tsv")            , optional: true, emit: ptms
    path "versions.yml"                                     , emit: versions

    script:
    def args = task.ext.args ?: ''
    def scripts = params.cpufold_scripts ?: "${projectDir}/scripts/cluster"
    """
    CPUFOLD=${params.cpufold ?: 'cpufold'} ${scripts}/cpufold_colabfold.sh ${meta.id} ${fasta} \\
        ${params_dir} ${numRec} ${task.cpus} ${task.memory.toMega()} ${args}
    """
}

// The planned peak of folding `fasta` (bytes from `cpufold plan --format json`) plus 15%. An A3M
// input is planned with its MSA; a FASTA without one as its query alone (the fold itself needs
// --msa-mode single_sequence in task.ext.args, or refuses).
def cpufold_plan_memory(fasta, params_dir) {
    def cpufold = params.cpufold ?: 'cpufold'
    def proc = [cpufold, 'plan', fasta.toString(), '--data', params_dir.toString(), '--format', 'json', '--quiet',
                '--msa-mode', 'single_sequence'].execute()
    proc.waitFor()
    if (proc.exitValue() != 0) return 8.GB
    def plan = new groovy.json.JsonSlurper().parseText(proc.text)
    return new nextflow.util.MemoryUnit((long) (plan.dram_peak_bytes * 1.15))
}
