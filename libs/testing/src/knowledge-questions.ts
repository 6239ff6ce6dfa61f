/**
 * The knowledge bench's question set (issue 26's quality measure; docs/performance.md,
 * "bench/knowledge"): 100 questions, 50 in English and 50 in Chinese, each with the passage that
 * answers it. Every passage is invented (fictional companies, places and rules) and is planted, as
 * one paragraph, in one document of the generated corpus (knowledge-corpus.ts) among distractor
 * text; the question asks for it in other words, the way a user would, sharing only some of its
 * words (names, key nouns). Passages hold no `<`, `>` or `&`, so they read the same in every format.
 */

export interface KnowledgeQuestion {
  /** `en01`…`en50`, `zh01`…`zh50`. */
  id: string;
  lang: 'en' | 'zh';
  question: string;
  /** The labelled source passage: the text that answers the question, planted whole in one document. */
  passage: string;
}

/** [passage, question] pairs, in English. */
const ENGLISH: Array<[string, string]> = [
  [
    'Harbor Finch employees receive 18 days of paid annual leave in their first year, rising to 24 days after five years of service.',
    'How many vacation days does a new Harbor Finch employee get in the first year?',
  ],
  [
    'The Quillmark refund policy allows customers to return unopened software licences within 30 days of purchase for a full refund to the original card.',
    'Within what period can a Quillmark customer send back an unopened licence and get their money back?',
  ],
  [
    'The Tidewater data centre in Aarhus runs on a backup diesel generator that can power the server halls for 72 hours without refuelling.',
    "How long can the Aarhus data centre's generator keep the servers running?",
  ],
  [
    'Expense claims at Brightwell Consulting must be submitted through the Ledgerly portal no later than the 5th working day of the following month.',
    'What is the deadline for filing expense claims at Brightwell?',
  ],
  [
    'The Nimbus 7 drone has a maximum flight time of 42 minutes with the standard battery and a range of 11 kilometres.',
    'How long can the Nimbus 7 stay in the air on its standard battery?',
  ],
  [
    'Visitors to the Corvane laboratory must wear a yellow badge at all times and be escorted by a staff member beyond the second security door.',
    'What do guests need to wear while inside the Corvane lab?',
  ],
  [
    'Orlan Freight charges a surcharge of 4.50 euros per parcel for deliveries to islands that are not connected to the mainland by a bridge.',
    'Is there an extra fee for Orlan Freight parcels sent to an island?',
  ],
  [
    'The Pellucid cafeteria serves breakfast from 7:15 to 9:30 and lunch from 11:45 to 14:00 on weekdays.',
    'At what time can I get lunch in the Pellucid canteen?',
  ],
  [
    'Passwords for the Stonebridge intranet expire every 90 days and must contain at least 14 characters including one symbol.',
    'How often do Stonebridge intranet passwords have to be changed?',
  ],
  [
    'The annual Marlow Robotics hackathon takes place in the second week of October and the winning team receives a trip to the Kyoto research office.',
    'What prize do the winners of the Marlow hackathon get?',
  ],
  [
    'Parental leave at Vesper Health is 26 weeks at full pay for the primary caregiver and 8 weeks for the secondary caregiver.',
    'How many weeks of fully paid parental leave does a primary caregiver get at Vesper Health?',
  ],
  [
    'The Kestrel espresso machine must be descaled every 200 cycles; the display shows a red drop symbol when descaling is due.',
    'How can I tell when the Kestrel coffee machine needs descaling?',
  ],
  [
    'Greyhaven Bank blocks a debit card automatically after three wrong PIN entries; the card can be unblocked at any Greyhaven branch with photo identification.',
    'What happens to my Greyhaven debit card if I type the wrong PIN several times?',
  ],
  [
    'The Ashgrove library lends up to 12 books per member for a loan period of 21 days, renewable twice online.',
    'How many books can an Ashgrove library member borrow at once?',
  ],
  [
    'Deployment freezes at Calloway Systems start on 15 December and last until 3 January, during which only security fixes may be released.',
    'When does the Calloway holiday deployment freeze begin?',
  ],
  [
    'Each Fennick warehouse forklift receives a safety inspection every 250 operating hours, recorded in the blue maintenance log kept by the dock supervisor.',
    'How frequently are the forklifts at Fennick warehouses checked for safety?',
  ],
  [
    'Members of the Lumen gym can bring one guest per month free of charge; additional guests pay a day fee of 12 dollars.',
    'How much does it cost to bring an extra guest to the Lumen gym?',
  ],
  [
    'The Perrin translation team guarantees delivery of documents under 5,000 words within two business days.',
    'How quickly will the Perrin team translate a short document?',
  ],
  [
    'Remote workers at Oakhurst Media receive a home office allowance of 600 pounds every two years for a chair, desk or monitor.',
    'What budget do Oakhurst staff working from home get for office furniture?',
  ],
  [
    'The Sable river ferry departs from Pier 4 every 40 minutes between 6 am and midnight, and bicycles travel free.',
    'Do I have to pay to take my bicycle on the Sable ferry?',
  ],
  [
    'Wrenfield University requires doctoral theses to be submitted in both printed and PDF form, with the printed copy bound in dark green cloth.',
    'What colour binding does Wrenfield expect for a printed PhD thesis?',
  ],
  [
    'The Halcyon customer support line is staffed 24 hours a day for enterprise clients, while standard clients are served from 8 am to 8 pm.',
    'What are the support hours for standard Halcyon customers?',
  ],
  [
    'Mistral Motors offers a warranty of eight years or 160,000 kilometres on the battery pack of its electric vans.',
    "How long is the battery guaranteed on Mistral's electric vans?",
  ],
  [
    'In the Thornbury office, the fire assembly point is the car park behind the bakery on Mill Lane.',
    'Where should Thornbury staff gather if there is a fire?',
  ],
  [
    'Contractors at Ironvale Mining must complete a two-day underground safety course before their first shift below ground.',
    'What training does a contractor need before working underground at Ironvale?',
  ],
  [
    'The Silverline mobile plan includes 40 gigabytes of data per month; unused data rolls over for one month only.',
    'Does unused data on the Silverline plan carry over to the next month?',
  ],
  [
    'Bellamy Foods stores frozen goods at minus 22 degrees Celsius and rejects any delivery whose temperature log shows a reading above minus 15.',
    'At what temperature does Bellamy keep its frozen products?',
  ],
  [
    'The Riverside clinic requires patients to cancel appointments at least 24 hours in advance or pay a missed appointment fee of 35 dollars.',
    'What is the penalty for skipping a Riverside clinic appointment without notice?',
  ],
  [
    'The Polaris telescope at Mount Edda observatory has a primary mirror 3.6 metres across and is reserved for graduate students on Tuesday nights.',
    'How wide is the main mirror of the Polaris telescope?',
  ],
  [
    'Every pull request in the Juniper repository needs approval from two reviewers, one of whom must belong to the platform team.',
    'How many people have to review a Juniper pull request before it can be merged?',
  ],
  [
    'The Cobalt conference room on the fourth floor seats 16 people and has a ceiling microphone for hybrid meetings.',
    'How many people fit in the Cobalt meeting room?',
  ],
  [
    'Saltmarsh Hotel guests may check in from 3 pm, and late checkout until 1 pm is free for members of the Tern loyalty club.',
    'Who can leave late without paying extra at the Saltmarsh Hotel?',
  ],
  [
    'The Ember payroll system pays salaries on the 25th of each month, or on the previous working day when the 25th falls on a weekend.',
    'On which day of the month does Ember pay salaries?',
  ],
  [
    'Drivers for Copperline Couriers may not drive more than nine hours per day and must take a 45 minute break after four and a half hours.',
    'How long a rest must Copperline drivers take, and when?',
  ],
  [
    'The Alder community garden charges an annual plot rent of 45 euros and provides water from April to October.',
    'During which months is water available at the Alder garden?',
  ],
  [
    'Laptops issued by Kingsford IT are replaced after four years, or earlier if the repair cost exceeds half of the replacement price.',
    'When does Kingsford IT give staff a new laptop?',
  ],
  [
    'The Meridian choir rehearses on Thursday evenings in the chapel of Saint Aldric and welcomes new tenors without an audition.',
    'Do tenors have to audition to join the Meridian choir?',
  ],
  [
    'Glasswing Airlines allows one cabin bag of up to 8 kilograms plus a small personal item on all economy fares.',
    'What is the hand luggage weight limit on Glasswing economy fares?',
  ],
  [
    'Pinecrest school closes for a teacher training day on the first Friday of every term, and the after-school club remains open that day.',
    "Is the after-school club open on Pinecrest's teacher training days?",
  ],
  [
    'Hollis Energy customers who submit a meter reading before the 3rd of the month receive a bill based on actual rather than estimated usage.',
    'How can a Hollis Energy customer avoid an estimated bill?',
  ],
  [
    'The Vantage analytics dashboard refreshes sales figures every 15 minutes, while inventory figures are updated once per night at 2 am.',
    'How often are the inventory numbers on the Vantage dashboard updated?',
  ],
  [
    'Employees at Redcliff Insurance may work from abroad for up to 20 working days per calendar year after approval by their manager.',
    'For how many days a year can Redcliff staff work from another country?',
  ],
  [
    'The Aurora sensor kit measures carbon dioxide between 400 and 5,000 ppm with an accuracy of plus or minus 30 ppm.',
    'What range of carbon dioxide levels can the Aurora sensor measure?',
  ],
  [
    'At Westmoor Hospital, visiting hours on general wards are from 2 pm to 8 pm, with at most two visitors per bed.',
    'How many visitors may see a patient at the same time at Westmoor Hospital?',
  ],
  [
    'The Tanager bike-share scheme gives the first 30 minutes of every ride free to annual subscribers.',
    'For how long is a Tanager bike ride free for annual subscribers?',
  ],
  [
    'Linwood Council collects garden waste every second Wednesday from March to November in the brown bins.',
    'Which bin do I use for garden waste in Linwood?',
  ],
  [
    'Sparrow Labs reimburses conference travel in economy class only, except for flights longer than nine hours, which may be booked in premium economy.',
    'When may someone at Sparrow Labs fly premium economy to a conference?',
  ],
  [
    'The Osprey backup service keeps daily snapshots for 35 days and monthly snapshots for seven years.',
    'How long does Osprey retain its monthly backups?',
  ],
  [
    'Interns at Cresthaven Architects are paid a monthly stipend of 1,900 euros and receive a public transport pass.',
    'How much does Cresthaven pay its interns?',
  ],
  [
    'The Dunmore museum is free on the first Sunday of each month, and children under 12 always enter free.',
    'When can everyone visit the Dunmore museum without paying?',
  ],
];

/** [passage, question] pairs, in Chinese. */
const CHINESE: Array<[string, string]> = [
  ['青岚科技的新员工入职第一年享有十五天带薪年假，工作满五年后增加到二十天。', '青岚科技刚入职的员工一年有几天年假？'],
  ['云杉书店的会员凭会员卡购书可享受八五折优惠，每月十八日会员日再额外赠送积分。', '云杉书店的会员买书打几折？'],
  ['远航物流向海南岛寄送的包裹需要额外加收十二元的跨海运费。', '用远航物流寄包裹到海南要多付多少钱？'],
  [
    '北辰医院的普通病房探视时间为每天下午三点到晚上八点，每张病床最多允许两名探视者。',
    '北辰医院普通病房几点可以去看望病人？',
  ],
  [
    '星河银行的借记卡连续三次输错密码后会被自动锁定，持卡人需携带身份证到任意网点解锁。',
    '星河银行的卡密码输错几次会被锁？',
  ],
  ['金穗食堂工作日早餐供应时间为七点至九点，午餐为十一点半至一点半。', '金穗食堂中午几点开始供应午饭？'],
  [
    '翠湖公寓的住户每月可免费预约使用两次顶楼洗衣房，超出部分每次收费五元。',
    '翠湖公寓的洗衣房用超了免费次数以后怎么收费？',
  ],
  [
    '明德中学规定学生每天在校体育锻炼时间不少于一小时，周三下午为全校社团活动时间。',
    '明德中学的社团活动安排在什么时候？',
  ],
  ['长风汽车为电动车的电池组提供八年或十六万公里的质保，以先到者为准。', '长风电动车的电池保修多久？'],
  ['瑞丰集团的报销单据必须在费用发生后三十天内通过财务系统提交，逾期不予报销。', '瑞丰集团的费用报销有没有时间限制？'],
  ['紫藤图书馆每位读者最多可借阅十本图书，借期为二十八天，可在网上续借一次。', '在紫藤图书馆一次能借多少本书？'],
  ['蓝鲸云服务器的每日快照保留十四天，每月快照保留一年。', '蓝鲸云的每日备份能保存多长时间？'],
  ['华岳建筑的实习生每月补贴四千五百元，并提供公司宿舍。', '华岳建筑给实习生一个月多少钱？'],
  ['新蕾幼儿园每天早上八点前入园的孩子可以在园内享用免费早餐。', '新蕾幼儿园的孩子几点之前到园有早饭吃？'],
  ['鼎盛地产的售楼处周一闭馆，其余时间每天上午九点至下午六点开放。', '鼎盛地产的售楼处哪天不开门？'],
  ['顺达快递的快递员每天派件超过一百五十件后，每多派一件额外奖励一元。', '顺达快递的快递员多送件有奖励吗？'],
  ['松涛茶园每年四月举办采茶节，游客可以亲手采摘明前龙井并带走二百克。', '松涛茶园的采茶节在几月份？'],
  [
    '华光电子的所有笔记本电脑使用满四年后统一更换，维修费用超过新机价格一半时可提前更换。',
    '华光电子的员工电脑多久换一次？',
  ],
  [
    '安居物业规定小区内装修施工时间为工作日上午八点至十二点、下午两点至六点，周末禁止施工。',
    '安居物业管理的小区周末可以装修吗？',
  ],
  ['锦程航空经济舱旅客可免费携带一件不超过七公斤的手提行李。', '坐锦程航空的经济舱，随身行李限重多少？'],
  [
    '天衡律师事务所为新客户提供三十分钟的免费电话咨询，之后按每小时八百元收费。',
    '天衡律师事务所的第一次咨询要收费吗？',
  ],
  ['飞鸿公司的程序代码在合并之前必须经过两名同事审查，其中至少一人来自架构组。', '飞鸿公司合并代码需要几个人审核？'],
  [
    '清源水务的用户在每月五日前自行上报水表读数，可以按实际用量计费而不是估算。',
    '清源水务的用户怎样才能不按估算的用量交水费？',
  ],
  ['东篱社区菜园的地块年租金为三百元，每年三月至十一月提供灌溉用水。', '东篱菜园租一块地一年要多少钱？'],
  ['凯越酒店的入住时间为下午两点以后，金卡会员可以免费延迟退房到下午一点。', '凯越酒店哪些客人可以免费晚点退房？'],
  ['博雅博物馆每月第一个周日免费开放，十二岁以下儿童全年免票。', '博雅博物馆什么时候所有人都能免费参观？'],
  ['鹏程驾校的学员每次练车时长为两个小时，取消预约需要提前一天通知教练。', '在鹏程驾校一次练车练多长时间？'],
  ['丰禾超市的冷冻食品储存在零下二十度，收货时温度高于零下十五度的一律拒收。', '丰禾超市收冷冻货时对温度有什么要求？'],
  ['晨曦合唱团每周四晚上在文化宫排练，招收男高音不需要面试。', '晨曦合唱团在什么地方排练？'],
  ['恒通公交的老年卡持卡人在早上九点以后可以免费乘坐所有线路。', '老人拿恒通公交的老年卡几点以后坐车不要钱？'],
  [
    '宏图软件的员工每年可以申请最多二十个工作日的海外远程办公，需经直属上级批准。',
    '宏图软件的员工一年能在国外远程工作多少天？',
  ],
  ['绿洲健身房的会员每月可以免费带一位朋友，额外的朋友每人每次收费三十元。', '带朋友去绿洲健身房锻炼要收费吗？'],
  [
    '嘉禾大学要求博士论文同时提交纸质版和电子版，纸质版须使用深蓝色封面装订。',
    '嘉禾大学的博士论文纸质版用什么颜色的封面？',
  ],
  ['万象商场地下停车场前两个小时免费，之后每小时收费六元。', '在万象商场停车怎么收费？'],
  ['启明眼科诊所的验光配镜服务需要提前在微信公众号预约，当天不接受现场挂号。', '去启明眼科诊所配眼镜要怎么预约？'],
  ['海韵游轮的船票包含每日三餐，但酒水和岸上观光项目需要另行付费。', '海韵游轮的船票包括吃饭吗？'],
  ['银杏小学每学期第一个星期五为教师培训日，学生放假，课后托管班照常开放。', '银杏小学教师培训那天托管班开不开？'],
  ['远山户外的帐篷租赁押金为五百元，归还时检查无损坏即全额退还。', '在远山户外租帐篷要交多少押金？'],
  ['和风家政的保洁阿姨每次上门服务至少三小时，费用为每小时四十五元。', '请和风家政的保洁阿姨每小时多少钱？'],
  ['翰林出版社的投稿邮箱只接收Word格式的稿件，审稿周期一般为六周。', '翰林出版社审稿一般要多长时间？'],
  ['瀚海数据的销售报表每十五分钟刷新一次，库存数据每天凌晨两点更新。', '瀚海数据的库存数字什么时候更新？'],
  [
    '卓越电力的员工在高空作业前必须系好安全带，并由第二名同事在地面监护。',
    '卓越电力的员工高空作业时地面上要有人看着吗？',
  ],
  ['春晖养老院每天上午十点和下午四点安排两次集体健身操。', '春晖养老院的老人每天做几次健身操？'],
  ['锦绣花店在情人节前一周停止接受当天送达的订单，需至少提前两天下单。', '情人节前在锦绣花店订花要提前几天？'],
  [
    '百川游泳馆的深水区只对持有深水合格证的游客开放，合格证需通过两百米游泳测试。',
    '在百川游泳馆怎样才能进深水区游泳？',
  ],
  ['光明眼镜店承诺镜片在购买后一年内出现镀膜脱落可以免费更换。', '光明眼镜店的镜片镀膜掉了能免费换吗？'],
  [
    '龙腾网络的服务器发布冻结期从每年十二月二十日开始，到次年一月三日结束，期间只允许发布安全补丁。',
    '龙腾网络年底的发布冻结从哪天开始？',
  ],
  [
    '碧水湾度假村的儿童俱乐部接收四至十二岁的儿童，每天上午九点到下午五点有专人看护。',
    '碧水湾度假村的儿童俱乐部收多大的孩子？',
  ],
  ['信达会计师事务所要求审计底稿在项目结束后保存十年。', '信达会计师事务所的审计底稿要保留几年？'],
  ['雅韵琴行的钢琴课每节四十五分钟，首节试听课免费。', '雅韵琴行的钢琴试听课要钱吗？'],
];

const numbered = (lang: 'en' | 'zh', pairs: Array<[string, string]>): KnowledgeQuestion[] =>
  pairs.map(([passage, question], i) => ({ id: `${lang}${String(i + 1).padStart(2, '0')}`, lang, question, passage }));

export const KNOWLEDGE_QUESTIONS: readonly KnowledgeQuestion[] = [
  ...numbered('en', ENGLISH),
  ...numbered('zh', CHINESE),
];
