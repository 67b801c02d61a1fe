//! The developer configuration `ferry start QM1 --create` gives a new queue manager, as
//! IBM's developer container does: an application channel, queues, and the channel
//! authentication records that let applications in, on top of MQ's safe defaults.
//!
//! The application user `app` goes into the queue manager's user repository with the
//! password in FERRY_APP_PASSWORD, or a generated one that creation prints.
//!
//! It is an MQSC script written to `<qm dir>/autocfg/10-developer.mqsc` and run at every
//! start (qm.ini AutoConfig/MQSCConfig names the directory), so an administrator reads
//! it, edits it, or deletes it for a queue manager with MQ's defaults only.

/// The script's file name in the queue manager's `autocfg` directory.
pub const FILE_NAME: &str = "10-developer.mqsc";

/// The directory under the queue manager's own, named by MQSCConfig.
pub const DIRECTORY: &str = "autocfg";

/// The user id applications run as on the developer channels.
pub const APP_USER: &str = "app";

/// The environment variable that sets the application user's password at creation
/// (otherwise one is generated and printed), as IBM's container takes MQ_APP_PASSWORD.
pub const APP_PASSWORD_ENV: &str = "FERRY_APP_PASSWORD";

/// The script.
pub const MQSC: &str = "\
* Developer configuration (ferry start --create), run at every start. Delete this file
* for a queue manager with MQ's defaults only (SYSTEM.* channels closed to clients,
* administrators refused on client channels).
*
* Queues applications may use.
DEFINE QLOCAL('DEV.QUEUE.1') REPLACE
DEFINE QLOCAL('DEV.QUEUE.2') REPLACE
DEFINE QLOCAL('DEV.QUEUE.3') REPLACE
DEFINE QLOCAL('DEV.DEAD.LETTER.QUEUE') REPLACE
DEFINE QMODEL('DEV.APP.MODEL.QUEUE') REPLACE
*
* Passwords: user 'app' is in the queue manager's user repository (ferry user list);
* a user id a password proved becomes the connection's.
ALTER AUTHINFO('SYSTEM.DEFAULT.AUTHINFO.IDPWOS') AUTHTYPE(IDPWOS) ADOPTCTX(YES)
REFRESH SECURITY TYPE(CONNAUTH)
*
* MQ clients: channel DEV.APP.SVRCONN, with user id 'app' and its password; the
* connection runs as 'app'.
DEFINE CHANNEL('DEV.APP.SVRCONN') CHLTYPE(SVRCONN) MCAUSER('app') REPLACE
SET CHLAUTH('DEV.APP.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(CHANNEL) +
    CHCKCLNT(REQUIRED) DESCR('Applications connect as app, with its password') +
    ACTION(REPLACE)
*
* AMQP clients (Qpid JMS, proton) on SYSTEM.DEF.AMQP, with SASL PLAIN as 'app'.
ALTER CHANNEL('SYSTEM.DEF.AMQP') CHLTYPE(AMQP) MCAUSER('app')
SET CHLAUTH('SYSTEM.DEF.AMQP') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(CHANNEL) +
    CHCKCLNT(REQUIRED) DESCR('AMQP applications connect as app, with its password') +
    ACTION(REPLACE)
*
* Object authorities, as IBM's developer configuration grants them: 'app' may connect
* and inquire, and use the DEV.* queues; it may also make temporary queues (the
* default model queue, as JMS and AMQP temporary queues use it) and answer to them
* (AMQ.* and AMQP.* names).
SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('app') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE('DEV.**') OBJTYPE(QUEUE) PRINCIPAL('app') +
    AUTHADD(BROWSE,GET,INQ,PUT,DSP)
SET AUTHREC PROFILE('SYSTEM.DEFAULT.MODEL.QUEUE') OBJTYPE(QUEUE) PRINCIPAL('app') +
    AUTHADD(BROWSE,GET,INQ,DSP)
SET AUTHREC PROFILE('AMQ.**') OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(PUT,INQ)
SET AUTHREC PROFILE('AMQP.**') OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(PUT,INQ)
*
* Topics: 'app' may publish and subscribe to 'dev' and everything under it (IBM's
* developer configuration names its topic object DEV.BASE.TOPIC too).
DEFINE TOPIC('DEV.BASE.TOPIC') TOPICSTR('dev') REPLACE
SET AUTHREC PROFILE('DEV.BASE.TOPIC') OBJTYPE(TOPIC) PRINCIPAL('app') AUTHADD(PUB,SUB,DSP)
";
